from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.block_window import BlockWindow
    from ..models.recalled_ref import RecalledRef


T = TypeVar("T", bound="Block")


@_attrs_define
class Block:
    """The block as docs/formats.md "Block as JSON" describes it: the one type the CLI,
    the HTTP API and the benchmark print.

        Attributes:
            block (str):
            dropped (bool):
            elapsed_ms (float):
            mode (str): `record` or `ordinary`.
            recalled (list[RecalledRef]):
            tokens (int):
            window (BlockWindow | None | Unset):
    """

    block: str
    dropped: bool
    elapsed_ms: float
    mode: str
    recalled: list[RecalledRef]
    tokens: int
    window: BlockWindow | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.block_window import BlockWindow

        block = self.block

        dropped = self.dropped

        elapsed_ms = self.elapsed_ms

        mode = self.mode

        recalled = []
        for recalled_item_data in self.recalled:
            recalled_item = recalled_item_data.to_dict()
            recalled.append(recalled_item)

        tokens = self.tokens

        window: dict[str, Any] | None | Unset
        if isinstance(self.window, Unset):
            window = UNSET
        elif isinstance(self.window, BlockWindow):
            window = self.window.to_dict()
        else:
            window = self.window

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "block": block,
                "dropped": dropped,
                "elapsed_ms": elapsed_ms,
                "mode": mode,
                "recalled": recalled,
                "tokens": tokens,
            }
        )
        if window is not UNSET:
            field_dict["window"] = window

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.block_window import BlockWindow
        from ..models.recalled_ref import RecalledRef

        d = dict(src_dict)
        block = d.pop("block")

        dropped = d.pop("dropped")

        elapsed_ms = d.pop("elapsed_ms")

        mode = d.pop("mode")

        recalled = []
        _recalled = d.pop("recalled")
        for recalled_item_data in _recalled:
            recalled_item = RecalledRef.from_dict(recalled_item_data)

            recalled.append(recalled_item)

        tokens = d.pop("tokens")

        def _parse_window(data: object) -> BlockWindow | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                window_type_1 = BlockWindow.from_dict(data)

                return window_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BlockWindow | None | Unset, data)

        window = _parse_window(d.pop("window", UNSET))

        block = cls(
            block=block,
            dropped=dropped,
            elapsed_ms=elapsed_ms,
            mode=mode,
            recalled=recalled,
            tokens=tokens,
            window=window,
        )

        block.additional_properties = d
        return block

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
