from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RecalledRef")


@_attrs_define
class RecalledRef:
    """A memory that reached the block.

    Attributes:
        at (datetime.datetime):
        citation (str): holds | changed | unverifiable | unchecked (docs/mechanisms.md §8), looked up from
            the file versions.
        count (int):
        id (int):
        kind (str):
        external_id (None | str | Unset):
    """

    at: datetime.datetime
    citation: str
    count: int
    id: int
    kind: str
    external_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        citation = self.citation

        count = self.count

        id = self.id

        kind = self.kind

        external_id: None | str | Unset
        if isinstance(self.external_id, Unset):
            external_id = UNSET
        else:
            external_id = self.external_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "citation": citation,
                "count": count,
                "id": id,
                "kind": kind,
            }
        )
        if external_id is not UNSET:
            field_dict["external_id"] = external_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        citation = d.pop("citation")

        count = d.pop("count")

        id = d.pop("id")

        kind = d.pop("kind")

        def _parse_external_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        external_id = _parse_external_id(d.pop("external_id", UNSET))

        recalled_ref = cls(
            at=at,
            citation=citation,
            count=count,
            id=id,
            kind=kind,
            external_id=external_id,
        )

        recalled_ref.additional_properties = d
        return recalled_ref

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
