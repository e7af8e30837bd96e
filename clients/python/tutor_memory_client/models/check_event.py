from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.check_type import CheckType
from ..models.verdict_in import VerdictIn
from ..types import UNSET, Unset

T = TypeVar("T", bound="CheckEvent")


@_attrs_define
class CheckEvent:
    """A check of the learner's understanding of a topic.

    Attributes:
        at (str):
        topic (str): The concept or topic checked.
        type_ (CheckType):
        verdict (VerdictIn): How a check went.
        evaluation (None | str | Unset):
        id (None | str | Unset):
        predicted (float | None | Unset): The tutor's predicted chance of a right answer, in [0, 1].
    """

    at: str
    topic: str
    type_: CheckType
    verdict: VerdictIn
    evaluation: None | str | Unset = UNSET
    id: None | str | Unset = UNSET
    predicted: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at

        topic = self.topic

        type_ = self.type_.value

        verdict = self.verdict.value

        evaluation: None | str | Unset
        if isinstance(self.evaluation, Unset):
            evaluation = UNSET
        else:
            evaluation = self.evaluation

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        predicted: float | None | Unset
        if isinstance(self.predicted, Unset):
            predicted = UNSET
        else:
            predicted = self.predicted

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "topic": topic,
                "type": type_,
                "verdict": verdict,
            }
        )
        if evaluation is not UNSET:
            field_dict["evaluation"] = evaluation
        if id is not UNSET:
            field_dict["id"] = id
        if predicted is not UNSET:
            field_dict["predicted"] = predicted

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = d.pop("at")

        topic = d.pop("topic")

        type_ = CheckType(d.pop("type"))

        verdict = VerdictIn(d.pop("verdict"))

        def _parse_evaluation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        evaluation = _parse_evaluation(d.pop("evaluation", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_predicted(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        predicted = _parse_predicted(d.pop("predicted", UNSET))

        check_event = cls(
            at=at,
            topic=topic,
            type_=type_,
            verdict=verdict,
            evaluation=evaluation,
            id=id,
            predicted=predicted,
        )

        check_event.additional_properties = d
        return check_event

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
