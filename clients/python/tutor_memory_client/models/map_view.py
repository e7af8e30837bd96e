from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.map_view_map import MapViewMap


T = TypeVar("T", bound="MapView")


@_attrs_define
class MapView:
    """The concept map as a face shows it: the map, its teaching order by name
    (prerequisites first) and the readiness of the material.

        Attributes:
            map_ (MapViewMap): The concept map (nodes with readiness, centrality, layer, sources).
            readiness (float): The centrality-weighted readiness of the subject's material (0–1).
            teaching_order (list[list[str]]): Teaching order: layers of concept names, prerequisites first.
    """

    map_: MapViewMap
    readiness: float
    teaching_order: list[list[str]]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        map_ = self.map_.to_dict()

        readiness = self.readiness

        teaching_order = []
        for teaching_order_item_data in self.teaching_order:
            teaching_order_item = teaching_order_item_data

            teaching_order.append(teaching_order_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "map": map_,
                "readiness": readiness,
                "teaching_order": teaching_order,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.map_view_map import MapViewMap

        d = dict(src_dict)
        map_ = MapViewMap.from_dict(d.pop("map"))

        readiness = d.pop("readiness")

        teaching_order = []
        _teaching_order = d.pop("teaching_order")
        for teaching_order_item_data in _teaching_order:
            teaching_order_item = cast(list[str], teaching_order_item_data)

            teaching_order.append(teaching_order_item)

        map_view = cls(
            map_=map_,
            readiness=readiness,
            teaching_order=teaching_order,
        )

        map_view.additional_properties = d
        return map_view

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
