from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ConceptView")


@_attrs_define
class ConceptView:
    """
    Attributes:
        band (str): named | explained | ready
        builds_on (list[str]): Keys of the concepts it builds on.
        centrality (float):
        gist (str):
        key (str):
        layer (int):
        name (str):
        readiness (float):
        taught (list[str]): Teaching notes, oldest first.
    """

    band: str
    builds_on: list[str]
    centrality: float
    gist: str
    key: str
    layer: int
    name: str
    readiness: float
    taught: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        band = self.band

        builds_on = self.builds_on

        centrality = self.centrality

        gist = self.gist

        key = self.key

        layer = self.layer

        name = self.name

        readiness = self.readiness

        taught = self.taught

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "band": band,
                "builds_on": builds_on,
                "centrality": centrality,
                "gist": gist,
                "key": key,
                "layer": layer,
                "name": name,
                "readiness": readiness,
                "taught": taught,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        band = d.pop("band")

        builds_on = cast(list[str], d.pop("builds_on"))

        centrality = d.pop("centrality")

        gist = d.pop("gist")

        key = d.pop("key")

        layer = d.pop("layer")

        name = d.pop("name")

        readiness = d.pop("readiness")

        taught = cast(list[str], d.pop("taught"))

        concept_view = cls(
            band=band,
            builds_on=builds_on,
            centrality=centrality,
            gist=gist,
            key=key,
            layer=layer,
            name=name,
            readiness=readiness,
            taught=taught,
        )

        concept_view.additional_properties = d
        return concept_view

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
