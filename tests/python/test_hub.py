"""oneflow.hub: hubconf.py entrypoints from a local directory or a (faked, offline) GitHub
archive, the cache directory, and downloads over file:// and a local HTTP server."""

import hashlib
import http.server
import os
import sys
import threading
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pytest

import oneflow as flow
from oneflow import hub

SIBLING = "_hubtest_sibling_module"

HUBCONF = f'''
"""A test hub."""
dependencies = ["os", "json"]

import oneflow
from {SIBLING} import SCALE

not_callable = 3


def linear(in_features, out_features=2, bias=True):
    """Builds a Linear layer."""
    return oneflow.nn.Linear(in_features, out_features, bias=bias)


def echo(*args, **kwargs):
    return args, kwargs


def scaled(x):
    return x * SCALE


def fails():
    raise KeyError("from the entrypoint")


def _private():
    return "private"
'''


@pytest.fixture(autouse=True)
def _isolated_hub(tmp_path, monkeypatch):
    """Every test gets its own hub directory and no hub environment variables."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.delenv("ONEFLOW_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    hub.set_dir(tmp_path / "hub")
    yield
    sys.modules.pop(SIBLING, None)


def write_repo(directory, hubconf=HUBCONF):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hubconf.py").write_text(hubconf)
    (directory / f"{SIBLING}.py").write_text("SCALE = 10\n")
    return directory


@pytest.fixture
def repo(tmp_path):
    return write_repo(tmp_path / "repo")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ----------------------------------------------------------------------------- local hubconf


def test_module_is_reachable_from_oneflow():
    import oneflow

    assert oneflow.hub is hub
    for name in hub.__all__:
        assert callable(getattr(oneflow.hub, name))


def test_local_list_returns_public_callables(repo):
    assert hub.list(str(repo), source="local") == ["echo", "fails", "linear", "scaled"]


def test_local_help_returns_docstring(repo):
    assert hub.help(str(repo), "linear", source="local") == "Builds a Linear layer."
    assert hub.help(str(repo), "echo", source="local") is None
    with pytest.raises(RuntimeError, match="Cannot find callable missing"):
        hub.help(str(repo), "missing", source="local")


def test_local_load_passes_args_and_kwargs(repo):
    path_before = list(sys.path)
    args, kwargs = hub.load(str(repo), "echo", 1, "two", source="local", key=3)
    assert args == (1, "two")
    assert kwargs == {"key": 3}

    layer = hub.load(repo, "linear", 4, source="LOCAL", out_features=3, bias=False)
    assert isinstance(layer, flow.nn.Linear)
    assert tuple(layer.weight.shape) == (3, 4)
    assert layer.bias is None
    # hubconf imported its sibling module through the directory put on sys.path
    assert hub.load(str(repo), "scaled", 4, source="local") == 40
    assert sys.path == path_before


def test_local_load_restores_sys_path_when_the_entrypoint_raises(repo):
    path_before = list(sys.path)
    with pytest.raises(KeyError, match="from the entrypoint"):
        hub.load(str(repo), "fails", source="local")
    assert sys.path == path_before


def test_missing_dependencies_are_named(tmp_path):
    hubconf = (
        'dependencies = ["os", "no_such_module_for_hub_test", "no_such_pkg_hub.sub"]\n'
        "def model():\n    return 1\n"
    )
    d = write_repo(tmp_path / "deps", hubconf)
    with pytest.raises(RuntimeError) as err:
        hub.load(str(d), "model", source="local")
    assert str(err.value) == (
        "Missing dependencies: no_such_module_for_hub_test, no_such_pkg_hub.sub"
    )


def test_unknown_or_non_callable_entrypoint(repo):
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable"):
        hub.load(str(repo), "not_callable", source="local")
    with pytest.raises(ValueError, match="string"):
        hub.load(str(repo), 42, source="local")


def test_bad_source_and_missing_hubconf(repo, tmp_path):
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        hub.load(str(repo), "echo", source="svn")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="hubconf.py"):
        hub.load(str(tmp_path / "empty"), "echo", source="local")


# ----------------------------------------------------------------------------- cache directory


def test_get_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert hub.get_dir() == str(tmp_path / "home" / ".cache" / "oneflow" / "hub")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "oneflow" / "hub")

    monkeypatch.setenv("ONEFLOW_HOME", str(tmp_path / "ofhome"))
    assert hub.get_dir() == str(tmp_path / "ofhome" / "hub")

    hub.set_dir(tmp_path / "explicit")
    assert hub.get_dir() == str(tmp_path / "explicit")

    hub.set_dir("~/mine")
    assert hub.get_dir() == str(tmp_path / "home" / "mine")


# ----------------------------------------------------------------------------- downloads


def test_download_file_url_with_hash(tmp_path):
    src = tmp_path / "payload.bin"
    data = os.urandom(50_000)
    src.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    out = tmp_path / "out"
    out.mkdir()

    hub.download_url_to_file(src.as_uri(), str(out / "a.bin"), progress=False)
    hub.download_url_to_file(src.as_uri(), out / "b.bin", hash_prefix=digest[:8], progress=False)
    hub.download_url_to_file(src.as_uri(), out / "c.bin", hash_prefix=digest, progress=False)
    for name in ("a.bin", "b.bin", "c.bin"):
        assert (out / name).read_bytes() == data
    assert sorted(os.listdir(out)) == ["a.bin", "b.bin", "c.bin"]


def test_download_hash_mismatch_removes_temp_and_keeps_destination(tmp_path):
    src = tmp_path / "payload.bin"
    src.write_bytes(b"new contents")
    wrong = "0" * 8 if not sha256(src).startswith("0" * 8) else "f" * 8
    out = tmp_path / "out"
    out.mkdir()

    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(src.as_uri(), out / "fresh.bin", hash_prefix=wrong)
    assert os.listdir(out) == []  # neither the destination nor the temporary file

    (out / "kept.bin").write_bytes(b"old contents")
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(src.as_uri(), out / "kept.bin", hash_prefix=wrong)
    assert (out / "kept.bin").read_bytes() == b"old contents"
    assert os.listdir(out) == ["kept.bin"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves files from the server's directory; /truncated promises more than it sends."""

    def do_GET(self):
        if self.path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"x" * 10)
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def http_root(tmp_path):
    root = tmp_path / "served"
    root.mkdir()

    def handler(*args, **kwargs):
        return _Handler(*args, directory=str(root), **kwargs)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_download_over_http_with_progress(http_root, tmp_path, capsys):
    root, base = http_root
    data = os.urandom(30_000)
    (root / "w.bin").write_bytes(data)
    dst = tmp_path / "w.bin"
    digest = hashlib.sha256(data).hexdigest()
    hub.download_url_to_file(f"{base}/w.bin", dst, hash_prefix=digest[:10], progress=True)
    assert dst.read_bytes() == data
    err = capsys.readouterr().err
    assert "100" in err  # the progress display reached the end

    with pytest.raises(urllib.error.HTTPError):
        hub.download_url_to_file(f"{base}/absent.bin", tmp_path / "absent.bin", progress=False)
    assert not (tmp_path / "absent.bin").exists()


def test_download_truncated_response_is_rejected(http_root, tmp_path):
    _, base = http_root
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="incomplete: got 10 of 1000 bytes"):
        hub.download_url_to_file(f"{base}/truncated", out / "t.bin", progress=False)
    assert os.listdir(out) == []


def _state_dict():
    return {
        "weight": flow.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
        "bias": flow.tensor(np.array([0.5, -1.5], dtype=np.float32)),
    }


def _assert_same_state(loaded):
    expected = _state_dict()
    assert sorted(loaded) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())


def _saved_with_hash_name(directory, stem="weights", ext="of"):
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / "tmp.of"
    flow.save(_state_dict(), str(tmp))
    named = directory / f"{stem}-{sha256(tmp)[:8]}.{ext}"
    tmp.rename(named)
    return named


def test_load_state_dict_from_url_checks_hash_and_caches(tmp_path):
    src = _saved_with_hash_name(tmp_path / "remote")
    loaded = hub.load_state_dict_from_url(src.as_uri(), check_hash=True, progress=False)
    _assert_same_state(loaded)
    cached = Path(hub.get_dir()) / "checkpoints" / src.name
    assert cached.read_bytes() == src.read_bytes()

    # The second call reads the cache: the source is gone.
    src.unlink()
    _assert_same_state(
        hub.load_state_dict_from_url(
            src.as_uri(), check_hash=True, progress=False, map_location="cpu"
        )
    )


def test_load_state_dict_from_url_hash_mismatch(tmp_path):
    remote = tmp_path / "remote"
    remote.mkdir()
    flow.save(_state_dict(), str(remote / "tmp.of"))
    wrong = "0" * 8 if not sha256(remote / "tmp.of").startswith("0" * 8) else "f" * 8
    src = remote / f"weights-{wrong}.of"
    (remote / "tmp.of").rename(src)

    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(src.as_uri(), check_hash=True, progress=False)
    assert os.listdir(Path(hub.get_dir()) / "checkpoints") == []
    # Without check_hash the same name is just a name.
    _assert_same_state(hub.load_state_dict_from_url(src.as_uri(), progress=False))


def test_load_state_dict_from_url_check_hash_without_a_hash_in_the_name_loads(tmp_path):
    # torch.hub's rule: check_hash applies to names carrying a '-<sha256 prefix>.' part only.
    src = tmp_path / "plain.of"
    flow.save(_state_dict(), str(src))
    _assert_same_state(hub.load_state_dict_from_url(src.as_uri(), check_hash=True, progress=False))
    assert (Path(hub.get_dir()) / "checkpoints" / "plain.of").exists()


def test_load_state_dict_from_url_model_dir_and_file_name(tmp_path):
    src = tmp_path / "remote.of"
    flow.save(_state_dict(), str(src))
    model_dir = tmp_path / "models"
    _assert_same_state(
        hub.load_state_dict_from_url(
            src.as_uri(), model_dir=str(model_dir), file_name="renamed.of", progress=False
        )
    )
    assert os.listdir(model_dir) == ["renamed.of"]
    assert not (Path(hub.get_dir()) / "checkpoints").exists()


def test_load_state_dict_from_url_over_http(http_root):
    root, base = http_root
    src = _saved_with_hash_name(root)
    loaded = hub.load_state_dict_from_url(f"{base}/{src.name}", check_hash=True, progress=False)
    _assert_same_state(loaded)


def test_load_state_dict_from_url_single_file_zip(tmp_path):
    saved = tmp_path / "inner.of"
    flow.save(_state_dict(), str(saved))
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(saved, "inner.of")
    _assert_same_state(hub.load_state_dict_from_url(archive.as_uri(), progress=False))
    checkpoints = Path(hub.get_dir()) / "checkpoints"
    assert sorted(os.listdir(checkpoints)) == ["inner.of", "packed.zip"]


class _Unsafe:
    pass


def test_load_state_dict_from_url_refuses_pickle(tmp_path):
    src = tmp_path / "pickled.of"
    flow.save({"extra": _Unsafe()}, str(src))
    with pytest.raises(RuntimeError, match="pickled objects"):
        hub.load_state_dict_from_url(src.as_uri(), progress=False)


# ----------------------------------------------------------------------------- github (offline)


def test_split_repo_spec_and_archive_link():
    assert hub._split_repo_spec("Oneflow-Inc/vision:v0.2.0") == ("Oneflow-Inc", "vision", "v0.2.0")
    assert hub._split_repo_spec("owner/repo") == ("owner", "repo", None)
    assert hub._split_repo_spec("owner/repo:feature/x") == ("owner", "repo", "feature/x")
    for bad in ("repo", "a/b/c", "/repo", "owner/", "owner/repo:", ":ref", None):
        with pytest.raises(ValueError, match="owner/repo"):
            hub._split_repo_spec(bad)

    assert (
        hub._git_archive_link("Oneflow-Inc", "vision", "v0.2.0")
        == "https://github.com/Oneflow-Inc/vision/zipball/v0.2.0"
    )
    assert (
        hub._git_archive_link("o", "r", "refs/heads/feature/x")
        == "https://github.com/o/r/zipball/refs/heads/feature/x"
    )
    assert hub._repo_cache_name("o", "r", "feature/x") == "o_r_feature_x"


def test_parse_repo_info_default_branch(monkeypatch, tmp_path):
    def no_network(*args, **kwargs):
        raise AssertionError("network used")

    monkeypatch.setattr(hub, "urlopen", no_network)
    assert hub._parse_repo_info("o/r:dev") == ("o", "r", "dev")

    class Opened:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    seen = []

    def main_exists(url, *args, **kwargs):
        seen.append(url)
        return Opened()

    monkeypatch.setattr(hub, "urlopen", main_exists)
    assert hub._parse_repo_info("o/r") == ("o", "r", "main")
    assert seen == ["https://github.com/o/r/tree/main/"]

    def not_found(url, *args, **kwargs):
        raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)

    monkeypatch.setattr(hub, "urlopen", not_found)
    assert hub._parse_repo_info("o/r") == ("o", "r", "master")

    def offline(url, *args, **kwargs):
        raise urllib.error.URLError("offline")

    monkeypatch.setattr(hub, "urlopen", offline)
    with pytest.raises(urllib.error.URLError):
        hub._parse_repo_info("o/r", str(tmp_path))
    (tmp_path / "o_r_master").mkdir()
    assert hub._parse_repo_info("o/r", str(tmp_path)) == ("o", "r", "master")


def test_validate_not_a_forked_repo(monkeypatch):
    pages = {
        "branches": [[{"name": "main", "commit": {"sha": "abc123"}}], []],
        "tags": [[{"name": "v1.0", "commit": {"sha": "def456"}}], []],
    }
    requested = []

    def fake_read_json(url):
        requested.append(url)
        kind = "branches" if "/branches?" in url else "tags"
        page = int(url.rsplit("page=", 1)[1])
        return pages[kind][page - 1]

    monkeypatch.setattr(hub, "_read_json", fake_read_json)
    hub._validate_not_a_forked_repo("o", "r", "main")
    hub._validate_not_a_forked_repo("o", "r", "def4")
    assert requested[0] == "https://api.github.com/repos/o/r/branches?per_page=100&page=1"
    with pytest.raises(ValueError, match="Cannot find v9"):
        hub._validate_not_a_forked_repo("o", "r", "v9")


@pytest.fixture
def fake_github(tmp_path, monkeypatch):
    """Routes archive downloads to a local zip shaped like GitHub's (one top-level folder)."""
    src = write_repo(tmp_path / "github-src")
    archive = tmp_path / "archive.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in src.iterdir():
            zf.write(f, f"someone-proj-abc1234/{f.name}")
    requested = []

    def archive_link(owner, name, ref):
        requested.append((owner, name, ref))
        return archive.as_uri()

    monkeypatch.setattr(hub, "_git_archive_link", archive_link)
    return archive, requested


def test_github_load_downloads_extracts_and_caches(fake_github):
    archive, requested = fake_github
    out = hub.load("someone/proj:v1", "echo", 5, trust_repo=True, skip_validation=True, k=1)
    assert out == ((5,), {"k": 1})
    assert requested == [("someone", "proj", "v1")]

    hub_dir = Path(hub.get_dir())
    repo_dir = hub_dir / "someone_proj_v1"
    assert (repo_dir / "hubconf.py").is_file()
    assert (hub_dir / "trusted_list").read_text().split() == ["someone_proj"]
    # Only the checkout and the trust list remain: the archive and scratch folder are gone.
    assert sorted(os.listdir(hub_dir)) == ["someone_proj_v1", "trusted_list"]

    # Cached: works with the archive gone, and list/help use the same checkout.
    archive.unlink()
    assert hub.load("someone/proj:v1", "scaled", 2, skip_validation=True) == 20
    assert hub.list("someone/proj:v1", skip_validation=True) == [
        "echo",
        "fails",
        "linear",
        "scaled",
    ]
    assert hub.help("someone/proj:v1", "linear") == "Builds a Linear layer."
    assert len(requested) == 1

    # force_reload downloads again (and fails here); the old checkout survives the failure.
    with pytest.raises((urllib.error.URLError, OSError)):
        hub.load("someone/proj:v1", "echo", force_reload=True, skip_validation=True)
    assert len(requested) == 2
    assert (repo_dir / "hubconf.py").is_file()


def test_github_load_validates_ref_unless_skipped(fake_github, monkeypatch):
    calls = []

    def validate(owner, name, ref):
        calls.append((owner, name, ref))
        raise ValueError(f"Cannot find {ref}")

    monkeypatch.setattr(hub, "_validate_not_a_forked_repo", validate)
    with pytest.raises(ValueError, match="Cannot find v1"):
        hub.load("someone/proj:v1", "echo", trust_repo=True)
    assert calls == [("someone", "proj", "v1")]
    assert not (Path(hub.get_dir()) / "someone_proj_v1").exists()


def test_trust_repo(fake_github, monkeypatch):
    _, requested = fake_github
    hub_dir = Path(hub.get_dir())

    # None: warns about an untrusted repository, records nothing.
    with pytest.warns(UserWarning, match="untrusted repository"):
        hub._check_repo_is_trusted("a", "b", "a_b_main", None, "load")
    assert not (hub_dir / "trusted_list").exists()

    # False always asks; "no" (or just Enter) refuses before anything is downloaded.
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(RuntimeError, match="Untrusted repository"):
        hub.load("someone/proj:v1", "echo", trust_repo=False, skip_validation=True)
    assert requested == []
    monkeypatch.setattr("builtins.input", lambda prompt: "maybe")
    with pytest.raises(ValueError, match="Unrecognized response"):
        hub.load("someone/proj:v1", "echo", trust_repo=False, skip_validation=True)

    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    hub.load("someone/proj:v1", "echo", trust_repo=False, skip_validation=True)
    assert (hub_dir / "trusted_list").read_text().split() == ["someone_proj"]

    # "check" does not ask for a trusted repository or a trusted owner.
    def no_prompt(prompt):
        raise AssertionError("asked")

    monkeypatch.setattr("builtins.input", no_prompt)
    hub._check_repo_is_trusted("someone", "proj", "someone_proj_v2", "check", "load")
    hub._check_repo_is_trusted("Oneflow-Inc", "vision", "Oneflow-Inc_vision_main", "check", "load")
    assert (hub_dir / "trusted_list").read_text().split() == ["someone_proj"]
    with pytest.raises(ValueError, match="trust_repo"):
        hub._check_repo_is_trusted("x", "y", "x_y_main", "sometimes", "load")


def test_load_state_dict_from_url_reads_torch_checkpoints(tmp_path):
    import torch

    src = tmp_path / "resnet-torch.pth"
    torch.save({"fc.weight": torch.arange(6.0).reshape(2, 3)}, src)
    sd = hub.load_state_dict_from_url(src.as_uri(), model_dir=tmp_path / "cache", progress=False)
    assert sd["fc.weight"].numpy().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
