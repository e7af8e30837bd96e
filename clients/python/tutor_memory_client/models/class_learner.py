from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.standing import Standing
from ..types import UNSET, Unset

T = TypeVar("T", bound="ClassLearner")


@_attrs_define
class ClassLearner:
    """One learner's row.

    Attributes:
        learner (str):
        quiet (bool): Not seen in the fourteen days before the view's instant.
        standings (list[Standing]): One standing per column of [`ClassView::concepts`], in its order.
        subject (str): The subject's key, `learner/course`.
        title (str):
        last_seen (datetime.datetime | None | Unset): The newest episode's instant; none for an empty log.
    """

    learner: str
    quiet: bool
    standings: list[Standing]
    subject: str
    title: str
    last_seen: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        learner = self.learner

        quiet = self.quiet

        standings = []
        for standings_item_data in self.standings:
            standings_item = standings_item_data.value
            standings.append(standings_item)

        subject = self.subject

        title = self.title

        last_seen: None | str | Unset
        if isinstance(self.last_seen, Unset):
            last_seen = UNSET
        elif isinstance(self.last_seen, datetime.datetime):
            last_seen = self.last_seen.isoformat()
        else:
            last_seen = self.last_seen

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "learner": learner,
                "quiet": quiet,
                "standings": standings,
                "subject": subject,
                "title": title,
            }
        )
        if last_seen is not UNSET:
            field_dict["last_seen"] = last_seen

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        learner = d.pop("learner")

        quiet = d.pop("quiet")

        standings = []
        _standings = d.pop("standings")
        for standings_item_data in _standings:
            standings_item = Standing(standings_item_data)

            standings.append(standings_item)

        subject = d.pop("subject")

        title = d.pop("title")

        def _parse_last_seen(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_seen_type_0 = datetime.datetime.fromisoformat(data)

                return last_seen_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_seen = _parse_last_seen(d.pop("last_seen", UNSET))

        class_learner = cls(
            learner=learner,
            quiet=quiet,
            standings=standings,
            subject=subject,
            title=title,
            last_seen=last_seen,
        )

        class_learner.additional_properties = d
        return class_learner

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
