from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ClassConcept")


@_attrs_define
class ClassConcept:
    """A concept of the course and how the class stands on it.

    Attributes:
        in_maps (int): How many learners' maps have it.
        key (str): Canonical key (what beliefs name).
        name (str):
        no_evidence (int):
        still_learning (int):
        struggles (int):
        understands (int):
    """

    in_maps: int
    key: str
    name: str
    no_evidence: int
    still_learning: int
    struggles: int
    understands: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        in_maps = self.in_maps

        key = self.key

        name = self.name

        no_evidence = self.no_evidence

        still_learning = self.still_learning

        struggles = self.struggles

        understands = self.understands

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "in_maps": in_maps,
                "key": key,
                "name": name,
                "no_evidence": no_evidence,
                "still_learning": still_learning,
                "struggles": struggles,
                "understands": understands,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        in_maps = d.pop("in_maps")

        key = d.pop("key")

        name = d.pop("name")

        no_evidence = d.pop("no_evidence")

        still_learning = d.pop("still_learning")

        struggles = d.pop("struggles")

        understands = d.pop("understands")

        class_concept = cls(
            in_maps=in_maps,
            key=key,
            name=name,
            no_evidence=no_evidence,
            still_learning=still_learning,
            struggles=struggles,
            understands=understands,
        )

        class_concept.additional_properties = d
        return class_concept

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
