from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.tutor_type import TutorType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cite_in import CiteIn


T = TypeVar("T", bound="TutorEvent")


@_attrs_define
class TutorEvent:
    """The tutor answered, citing files.

    Attributes:
        at (str):
        text (str):
        type_ (TutorType):
        cites (list[CiteIn] | Unset):
        id (None | str | Unset):
    """

    at: str
    text: str
    type_: TutorType
    cites: list[CiteIn] | Unset = UNSET
    id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at

        text = self.text

        type_ = self.type_.value

        cites: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.cites, Unset):
            cites = []
            for cites_item_data in self.cites:
                cites_item = cites_item_data.to_dict()
                cites.append(cites_item)

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "text": text,
                "type": type_,
            }
        )
        if cites is not UNSET:
            field_dict["cites"] = cites
        if id is not UNSET:
            field_dict["id"] = id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.cite_in import CiteIn

        d = dict(src_dict)
        at = d.pop("at")

        text = d.pop("text")

        type_ = TutorType(d.pop("type"))

        _cites = d.pop("cites", UNSET)
        cites: list[CiteIn] | Unset = UNSET
        if _cites is not UNSET:
            cites = []
            for cites_item_data in _cites:
                cites_item = CiteIn.from_dict(cites_item_data)

                cites.append(cites_item)

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        tutor_event = cls(
            at=at,
            text=text,
            type_=type_,
            cites=cites,
            id=id,
        )

        tutor_event.additional_properties = d
        return tutor_event

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
