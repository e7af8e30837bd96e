from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Taught")


@_attrs_define
class Taught:
    """What teaching the tutor did.

    Attributes:
        appended (int): Episodes appended (0 when the same message was recorded before).
        concepts (list[str]): Concepts of the map the message names.
        cue (str):
        lang (str): The language whose cue was found.
        seq (int): The taught episode's seq.
    """

    appended: int
    concepts: list[str]
    cue: str
    lang: str
    seq: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        appended = self.appended

        concepts = self.concepts

        cue = self.cue

        lang = self.lang

        seq = self.seq

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "appended": appended,
                "concepts": concepts,
                "cue": cue,
                "lang": lang,
                "seq": seq,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        appended = d.pop("appended")

        concepts = cast(list[str], d.pop("concepts"))

        cue = d.pop("cue")

        lang = d.pop("lang")

        seq = d.pop("seq")

        taught = cls(
            appended=appended,
            concepts=concepts,
            cue=cue,
            lang=lang,
            seq=seq,
        )

        taught.additional_properties = d
        return taught

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
