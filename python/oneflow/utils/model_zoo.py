"""utils.model_zoo (torch.utils.model_zoo): load_url, hub.load_state_dict_from_url's old name."""

from oneflow.hub import load_state_dict_from_url as load_url  # noqa: F401
