from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.grounding_out_traces_item import GroundingOutTracesItem


T = TypeVar("T", bound="GroundingOut")


@_attrs_define
class GroundingOut:
    """
    Attributes:
        saved (bool): Whether the stance was saved on the answer episode.
        says_cannot (bool):
        stance (str): answered | partial | couldnt
        traces (list[GroundingOutTracesItem]): Each claim with its source (a file line or a dated memory), if any.
    """

    saved: bool
    says_cannot: bool
    stance: str
    traces: list[GroundingOutTracesItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        saved = self.saved

        says_cannot = self.says_cannot

        stance = self.stance

        traces = []
        for traces_item_data in self.traces:
            traces_item = traces_item_data.to_dict()
            traces.append(traces_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "saved": saved,
                "says_cannot": says_cannot,
                "stance": stance,
                "traces": traces,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.grounding_out_traces_item import GroundingOutTracesItem

        d = dict(src_dict)
        saved = d.pop("saved")

        says_cannot = d.pop("says_cannot")

        stance = d.pop("stance")

        traces = []
        _traces = d.pop("traces")
        for traces_item_data in _traces:
            traces_item = GroundingOutTracesItem.from_dict(traces_item_data)

            traces.append(traces_item)

        grounding_out = cls(
            saved=saved,
            says_cannot=says_cannot,
            stance=stance,
            traces=traces,
        )

        grounding_out.additional_properties = d
        return grounding_out

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
