from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="FileOut")


@_attrs_define
class FileOut:
    """
    Attributes:
        added_at (datetime.datetime):
        format_ (str): markdown | text | pdf
        name (str):
        pages (int):
        sha256 (str):
        version (int):
        removed_at (datetime.datetime | None | Unset):
        replaced_at (datetime.datetime | None | Unset):
    """

    added_at: datetime.datetime
    format_: str
    name: str
    pages: int
    sha256: str
    version: int
    removed_at: datetime.datetime | None | Unset = UNSET
    replaced_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        added_at = self.added_at.isoformat()

        format_ = self.format_

        name = self.name

        pages = self.pages

        sha256 = self.sha256

        version = self.version

        removed_at: None | str | Unset
        if isinstance(self.removed_at, Unset):
            removed_at = UNSET
        elif isinstance(self.removed_at, datetime.datetime):
            removed_at = self.removed_at.isoformat()
        else:
            removed_at = self.removed_at

        replaced_at: None | str | Unset
        if isinstance(self.replaced_at, Unset):
            replaced_at = UNSET
        elif isinstance(self.replaced_at, datetime.datetime):
            replaced_at = self.replaced_at.isoformat()
        else:
            replaced_at = self.replaced_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "added_at": added_at,
                "format": format_,
                "name": name,
                "pages": pages,
                "sha256": sha256,
                "version": version,
            }
        )
        if removed_at is not UNSET:
            field_dict["removed_at"] = removed_at
        if replaced_at is not UNSET:
            field_dict["replaced_at"] = replaced_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        added_at = datetime.datetime.fromisoformat(d.pop("added_at"))

        format_ = d.pop("format")

        name = d.pop("name")

        pages = d.pop("pages")

        sha256 = d.pop("sha256")

        version = d.pop("version")

        def _parse_removed_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                removed_at_type_0 = datetime.datetime.fromisoformat(data)

                return removed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        removed_at = _parse_removed_at(d.pop("removed_at", UNSET))

        def _parse_replaced_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                replaced_at_type_0 = datetime.datetime.fromisoformat(data)

                return replaced_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        replaced_at = _parse_replaced_at(d.pop("replaced_at", UNSET))

        file_out = cls(
            added_at=added_at,
            format_=format_,
            name=name,
            pages=pages,
            sha256=sha256,
            version=version,
            removed_at=removed_at,
            replaced_at=replaced_at,
        )

        file_out.additional_properties = d
        return file_out

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
