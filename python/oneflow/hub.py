"""oneflow.hub: load models published as a ``hubconf.py`` in a GitHub repository or a local
directory, and download checkpoints into a local cache.

The API follows torch.hub:

* ``list`` / ``help`` / ``load`` read ``hubconf.py`` from ``source="github"`` (``repo_or_dir``
  is ``"owner/repo[:ref]"``; the repository's zip archive is downloaded once into ``get_dir()``)
  or ``source="local"`` (a directory). Entrypoints are the callables in ``hubconf.py`` whose
  names do not start with ``_``; an optional ``dependencies`` list names modules that must be
  importable before an entrypoint is called.
* ``download_url_to_file`` downloads to a temporary file next to the destination, verifies an
  optional SHA-256 prefix and only then renames it into place.
* ``load_state_dict_from_url`` caches downloads in ``get_dir()/checkpoints`` and reads them with
  ``oneflow.load``.
* ``get_dir`` is ``set_dir``'s value if set, else ``$ONEFLOW_HOME/hub``, where ``ONEFLOW_HOME``
  defaults to ``$XDG_CACHE_HOME/oneflow`` and ``XDG_CACHE_HOME`` to ``~/.cache``.

GitHub repositories run arbitrary code when loaded, so ``trust_repo`` decides whether an
unknown repository may be used (see ``load``).
"""

import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlparse
from urllib.request import Request, urlopen

import oneflow
from oneflow.framework.serialization import MAGIC as _SAVE_MAGIC

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

ENV_ONEFLOW_HOME = "ONEFLOW_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 8192
# "resnet18-5c106cde.pth" -> "5c106cde"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
# Repositories of these owners are trusted without asking.
_TRUSTED_REPO_OWNERS = ("Oneflow-Inc",)

_hub_dir = None


# ----------------------------------------------------------------------------- cache location


def _get_oneflow_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "oneflow")
    return os.path.expanduser(os.getenv(ENV_ONEFLOW_HOME, default))


def get_dir():
    """The hub cache directory for downloaded repositories and checkpoints.

    ``set_dir``'s value when it was called, else ``$ONEFLOW_HOME/hub``; ``$ONEFLOW_HOME``
    defaults to ``$XDG_CACHE_HOME/oneflow`` and ``$XDG_CACHE_HOME`` to ``~/.cache``."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_oneflow_home(), "hub")


def set_dir(d):
    """Sets the directory ``get_dir`` returns (``~`` is expanded)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# ----------------------------------------------------------------------------- progress display


try:
    from tqdm.auto import tqdm as _tqdm
except ImportError:
    _tqdm = None


class _Progress:
    """A minimal stand-in for tqdm: percentage (or byte count) on one stderr line."""

    def __init__(self, total, disable):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total:
            sys.stderr.write(f"\r{100.0 * self.n / self.total:.1f}%")
        else:
            sys.stderr.write(f"\r{self.n} bytes")
        sys.stderr.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


def _progress_bar(total, progress):
    if _tqdm is not None:
        return _tqdm(
            total=total, disable=not progress, unit="B", unit_scale=True, unit_divisor=1024
        )
    return _Progress(total, not progress)


# ----------------------------------------------------------------------------- downloads


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads ``url`` to the file ``dst``.

    The data goes to a temporary file in ``dst``'s directory, which is renamed to ``dst`` only
    when the download completed and, if ``hash_prefix`` is given, the SHA-256 hex digest of the
    data starts with it; otherwise RuntimeError is raised, the temporary file is removed and
    ``dst`` is left as it was. ``progress`` shows a progress bar on stderr."""
    dst = os.path.expanduser(os.fspath(dst))
    dst_dir = os.path.dirname(os.path.abspath(dst))
    req = Request(url, headers={"User-Agent": "oneflow.hub"})
    with urlopen(req) as response:
        length = response.headers.get("Content-Length") if response.headers else None
        file_size = int(length) if length and length.isdigit() else None
        # A temporary file in the same directory, so the final rename is atomic and an
        # interrupted download never replaces a good checkpoint.
        tmp = tempfile.NamedTemporaryFile(
            delete=False, dir=dst_dir, prefix=os.path.basename(dst) + ".", suffix=".partial"
        )
        try:
            sha256 = hashlib.sha256()
            received = 0
            with tmp, _progress_bar(file_size, progress) as bar:
                while True:
                    chunk = response.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    tmp.write(chunk)
                    sha256.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            if file_size is not None and received != file_size:
                raise RuntimeError(
                    f"download of {url} is incomplete: got {received} of {file_size} bytes"
                )
            if hash_prefix is not None:
                digest = sha256.hexdigest()
                if digest[: len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(
                        f'invalid hash value for {url} (expected "{hash_prefix}", got "{digest}")'
                    )
            os.replace(tmp.name, dst)
        finally:
            if os.path.exists(tmp.name):
                os.remove(tmp.name)


def _is_legacy_zip(filename):
    # A zip holding exactly one file: how checkpoints were sometimes published compressed.
    # Files written by oneflow.save start with their own magic and are never treated as zips.
    with open(filename, "rb") as f:
        if f.read(len(_SAVE_MAGIC)) == _SAVE_MAGIC:
            return False
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _legacy_zip_load(filename, model_dir, map_location, weights_only=None):
    with zipfile.ZipFile(filename) as zf:
        # extract() strips absolute paths and "..", so the file stays inside model_dir.
        extracted = zf.extract(zf.infolist()[0], model_dir)
    return oneflow.load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(
    url,
    model_dir=None,
    map_location=None,
    progress=True,
    check_hash=False,
    file_name=None,
    weights_only=None,
):
    """Downloads the object at ``url`` (once) and returns ``oneflow.load`` of it.

    The file is cached as ``model_dir/<name>`` (``model_dir`` defaults to
    ``get_dir()/checkpoints``; ``<name>`` is ``file_name`` or the URL's last path component)
    and is not downloaded again while it exists. With ``check_hash`` and a name like
    ``name-<sha256 prefix>.ext``, the download must match that prefix. A zip archive
    holding a single file is extracted next to it and that file is loaded. ``map_location``
    is passed to ``oneflow.load``, which also reads files written by ``torch.save``; pickled
    objects are refused, as ``oneflow.load`` does by default, since the file comes from the
    network, unless ``weights_only=False``."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    model_dir = os.path.expanduser(os.fspath(model_dir))
    os.makedirs(model_dir, exist_ok=True)

    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    if not filename:
        raise ValueError(f"cannot derive a file name from {url!r}; pass file_name=")
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        hash_prefix = None
        if check_hash:
            # As in torch.hub: a name without a '-<sha256 prefix>.' part is not checked.
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)

    if _is_legacy_zip(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return oneflow.load(cached_file, map_location=map_location, weights_only=weights_only)


# ----------------------------------------------------------------------------- github repositories


def _split_repo_spec(github):
    """``"owner/repo[:ref]"`` -> ``(owner, repo, ref or None)``; ValueError if malformed."""
    if not isinstance(github, str):
        raise ValueError(f"expected 'owner/repo[:ref]', got {github!r}")
    repo_info, sep, ref = github.partition(":")
    owner, slash, name = repo_info.partition("/")
    if not owner or not slash or not name or "/" in name or (sep and not ref):
        raise ValueError(f"expected 'owner/repo[:ref]', got {github!r}")
    return owner, name, (ref if sep else None)


def _git_archive_link(owner, name, ref):
    # GitHub's "download a repository archive (zip)" endpoint; refs may contain "/".
    return f"https://github.com/{owner}/{name}/zipball/{quote(ref, safe='/')}"


def _repo_cache_name(owner, name, ref):
    # Branch names may contain "/", which would nest directories; GitHub forbids "\\" in them.
    return "_".join([owner, name, ref.replace("/", "_")])


def _parse_repo_info(github, hub_dir=None):
    """Like ``_split_repo_spec``, but resolves a missing ref to the default branch: ``main``
    if the repository has one, else ``master``. Offline, an already cached ``main`` or
    ``master`` is used."""
    owner, name, ref = _split_repo_spec(github)
    if ref is not None:
        return owner, name, ref
    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            ref = "main"
    except HTTPError as e:
        if e.code != 404:
            raise
        ref = "master"
    except URLError:
        for candidate in ("main", "master"):
            if hub_dir and os.path.isdir(
                os.path.join(hub_dir, _repo_cache_name(owner, name, candidate))
            ):
                return owner, name, candidate
        raise
    return owner, name, ref


def _read_json(url):
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token:
        headers["Authorization"] = f"token {token}"
    with urlopen(Request(url, headers=headers)) as r:
        return json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))


def _validate_not_a_forked_repo(owner, name, ref):
    # A commit of a fork is reachable under the parent's URL too; require the ref to be one of
    # this repository's own branches or tags (or a prefix of their commit SHAs).
    for prefix in (
        f"https://api.github.com/repos/{owner}/{name}/branches",
        f"https://api.github.com/repos/{owner}/{name}/tags",
    ):
        page = 1
        while True:
            entries = _read_json(f"{prefix}?per_page=100&page={page}")
            if not entries:
                break
            for entry in entries:
                if entry["name"] == ref or entry["commit"]["sha"].startswith(ref):
                    return
            page += 1
    raise ValueError(
        f"Cannot find {ref} in https://github.com/{owner}/{name}. If it is a commit of a fork, "
        "load from the forked repository directly."
    )


def _check_repo_is_trusted(owner, name, cache_name, trust_repo, calling_fn):
    hub_dir = get_dir()
    trusted_file = os.path.join(hub_dir, "trusted_list")
    trusted = set()
    if os.path.exists(trusted_file):
        with open(trusted_file) as f:
            trusted = {line.strip() for line in f}
    owner_name = f"{owner}_{name}"
    # A repository already downloaded into the cache was trusted when it was downloaded.
    is_trusted = (
        owner_name in trusted
        or os.path.isdir(os.path.join(hub_dir, cache_name))
        or owner in _TRUSTED_REPO_OWNERS
    )

    if trust_repo is None:
        if not is_trusted:
            warnings.warn(
                f"You are about to download and run code from an untrusted repository "
                f"({owner}/{name}). Pass {calling_fn}(..., trust_repo=True) to trust it, "
                "trust_repo=False to be asked, or trust_repo='check' to be asked only for "
                "repositories not trusted yet.",
                stacklevel=5,  # the caller of load / list / help
            )
        return
    if trust_repo not in (True, False, "check"):
        raise ValueError(f"trust_repo must be True, False, 'check' or None, got {trust_repo!r}")

    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?"
        )
        answer = answer.strip().lower()
        if answer in ("n", "no", ""):
            raise RuntimeError(f"Untrusted repository: {owner}/{name}")
        if answer not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer!r}")

    if not is_trusted:
        os.makedirs(hub_dir, exist_ok=True)
        with open(trusted_file, "a") as f:
            f.write(owner_name + "\n")


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _extract_repo_archive(archive, hub_dir, repo_dir):
    # GitHub archives hold one top-level folder "<owner>-<repo>-<sha>/": its contents become
    # repo_dir. Extracting into a scratch folder first leaves the old cache intact on failure.
    scratch = tempfile.mkdtemp(prefix=".extract-", dir=hub_dir)
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(scratch)
        entries = os.listdir(scratch)
        root = scratch
        if len(entries) == 1 and os.path.isdir(os.path.join(scratch, entries[0])):
            root = os.path.join(scratch, entries[0])
        _remove(repo_dir)
        shutil.move(root, repo_dir)
    finally:
        _remove(scratch)


def _get_cache_or_reload(
    github, force_reload, trust_repo, calling_fn, verbose=True, skip_validation=False
):
    """Returns the local directory of ``github``'s checkout, downloading it if needed."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github, hub_dir)
    cache_name = _repo_cache_name(owner, name, ref)
    repo_dir = os.path.join(hub_dir, cache_name)
    _check_repo_is_trusted(owner, name, cache_name, trust_repo, calling_fn)

    if not force_reload and os.path.isdir(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir

    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)

    archive = os.path.join(hub_dir, cache_name + ".zip")
    _remove(archive)
    try:
        url = _git_archive_link(owner, name, ref)
        if verbose:
            sys.stderr.write(f'Downloading: "{url}" to {archive}\n')
        try:
            download_url_to_file(url, archive, progress=False)
        except HTTPError as e:
            if e.code != 300:
                raise
            # 300 Multiple Choices: the ref is both a branch and a tag. Like git, take the branch.
            warnings.warn(
                f"The ref {ref} is ambiguous (both a tag and a branch?); using the branch. Pass "
                "refs/heads/<name> or refs/tags/<name> as the ref (with skip_validation=True) "
                "to choose.",
                stacklevel=4,
            )
            download_url_to_file(
                _git_archive_link(owner, name, f"refs/heads/{ref}"), archive, progress=False
            )
        _extract_repo_archive(archive, hub_dir, repo_dir)
    finally:
        _remove(archive)
    return repo_dir


# ----------------------------------------------------------------------------- hubconf entrypoints


class _PrependedSysPath:
    """Puts a directory first on sys.path, so hubconf.py can import its sibling modules."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        sys.path.insert(0, self.path)

    def __exit__(self, *exc):
        try:
            sys.path.remove(self.path)
        except ValueError:
            pass


def _import_hubconf(hubconf_dir):
    path = os.path.join(hubconf_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no {MODULE_HUBCONF} in {hubconf_dir}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module_exists(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        # find_spec("a.b") imports "a" and raises when "a" itself is missing.
        return False


def _check_dependencies(module):
    dependencies = getattr(module, VAR_DEPENDENCY, None)
    if dependencies is None:
        return
    missing = [pkg for pkg in dependencies if not _module_exists(pkg)]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    # A dependency imported at hubconf's top level already failed with ImportError; this
    # catches the ones the entrypoints import lazily.
    _check_dependencies(module)
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _resolve_dir(
    repo_or_dir, source, force_reload, skip_validation, trust_repo, calling_fn, verbose
):
    source = source.lower() if isinstance(source, str) else source
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        return _get_cache_or_reload(
            repo_or_dir, force_reload, trust_repo, calling_fn, verbose, skip_validation
        )
    return os.path.expanduser(os.fspath(repo_or_dir))


def list(
    github,
    force_reload=False,
    skip_validation=False,
    trust_repo=None,
    verbose=True,
    source="github",
):
    """Names of the entrypoints (callables not starting with ``_``) in ``github``'s hubconf.py.

    ``github`` is ``"owner/repo[:ref]"``, or a directory when ``source="local"``. The other
    arguments are as for ``load``."""
    hub_dir = _resolve_dir(
        github, source, force_reload, skip_validation, trust_repo, "list", verbose
    )
    with _PrependedSysPath(hub_dir):
        module = _import_hubconf(hub_dir)
    return [
        name for name in dir(module) if callable(getattr(module, name)) and not name.startswith("_")
    ]


def help(
    github, model, force_reload=False, skip_validation=False, trust_repo=None, source="github"
):
    """The docstring of entrypoint ``model`` in ``github``'s hubconf.py (None if it has none).

    ``github`` is ``"owner/repo[:ref]"``, or a directory when ``source="local"``. The other
    arguments are as for ``load``."""
    hub_dir = _resolve_dir(github, source, force_reload, skip_validation, trust_repo, "help", True)
    with _PrependedSysPath(hub_dir):
        module = _import_hubconf(hub_dir)
    return _load_entry_from_hubconf(module, model).__doc__


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo=None,
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """Calls entrypoint ``model`` of a hubconf.py with ``*args, **kwargs`` and returns its
    result.

    Args:
        repo_or_dir: ``"owner/repo[:ref]"`` for ``source="github"`` (``ref`` is a branch, tag
            or commit; default: ``main`` if it exists, else ``master``), or a directory
            containing ``hubconf.py`` for ``source="local"``.
        model: the entrypoint's name.
        source: ``"github"`` or ``"local"``.
        trust_repo: for GitHub: ``True`` trusts the repository and records it in
            ``get_dir()/trusted_list``; ``False`` always asks; ``"check"`` asks unless it is
            trusted already; ``None`` only warns about an untrusted repository.
        force_reload: download the repository again even if it is cached.
        verbose: report when the cached copy is used.
        skip_validation: do not ask the GitHub API whether ``ref`` belongs to the repository
            (rather than to a fork). Set ``GITHUB_TOKEN`` to raise the API's rate limit.

    Raises RuntimeError when a module listed in hubconf's ``dependencies`` is missing or when
    ``model`` is not a callable of hubconf."""
    repo_dir = _resolve_dir(
        repo_or_dir, source, force_reload, skip_validation, trust_repo, "load", verbose
    )
    return _load_local(repo_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    # The entrypoint runs with the directory on sys.path too: it may import siblings lazily.
    with _PrependedSysPath(hubconf_dir):
        module = _import_hubconf(hubconf_dir)
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)
