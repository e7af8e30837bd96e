from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.class_concept import ClassConcept
    from ..models.class_learner import ClassLearner
    from ..models.class_stale import ClassStale


T = TypeVar("T", bound="ClassView")


@_attrs_define
class ClassView:
    """The class view as of `at`.

    Attributes:
        at (datetime.datetime):
        concepts (list[ClassConcept]): The columns, in order: the most shared first, at most
            [`MAX_COLUMNS`] (those the class struggles with most when it has more).
        concepts_total (int): How many concepts the learners' maps hold in all (more than
            `concepts` holds when the course has more than [`MAX_COLUMNS`]).
        course (str): The subject name every learner's subject shares.
        learners (list[ClassLearner]): The rows of this page, by learner name (at most [`LEARNERS_PER_PAGE`]).
        learners_total (int): How many learners the class has in all.
        page (int): This page (1 on) and how many there are.
        pages (int):
        quiet (list[str]): Learners with no episode in the fourteen days before `at` (of every page).
        stale_citations (list[ClassStale]): Answers whose cited file has changed since, across the class.
        struggling (list[ClassConcept]): The concepts most learners struggle with (at most ten; only those
            at least one learner struggles with), most first, over every concept
            and learner.
    """

    at: datetime.datetime
    concepts: list[ClassConcept]
    concepts_total: int
    course: str
    learners: list[ClassLearner]
    learners_total: int
    page: int
    pages: int
    quiet: list[str]
    stale_citations: list[ClassStale]
    struggling: list[ClassConcept]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        concepts = []
        for concepts_item_data in self.concepts:
            concepts_item = concepts_item_data.to_dict()
            concepts.append(concepts_item)

        concepts_total = self.concepts_total

        course = self.course

        learners = []
        for learners_item_data in self.learners:
            learners_item = learners_item_data.to_dict()
            learners.append(learners_item)

        learners_total = self.learners_total

        page = self.page

        pages = self.pages

        quiet = self.quiet

        stale_citations = []
        for stale_citations_item_data in self.stale_citations:
            stale_citations_item = stale_citations_item_data.to_dict()
            stale_citations.append(stale_citations_item)

        struggling = []
        for struggling_item_data in self.struggling:
            struggling_item = struggling_item_data.to_dict()
            struggling.append(struggling_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "concepts": concepts,
                "concepts_total": concepts_total,
                "course": course,
                "learners": learners,
                "learners_total": learners_total,
                "page": page,
                "pages": pages,
                "quiet": quiet,
                "stale_citations": stale_citations,
                "struggling": struggling,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.class_concept import ClassConcept
        from ..models.class_learner import ClassLearner
        from ..models.class_stale import ClassStale

        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        concepts = []
        _concepts = d.pop("concepts")
        for concepts_item_data in _concepts:
            concepts_item = ClassConcept.from_dict(concepts_item_data)

            concepts.append(concepts_item)

        concepts_total = d.pop("concepts_total")

        course = d.pop("course")

        learners = []
        _learners = d.pop("learners")
        for learners_item_data in _learners:
            learners_item = ClassLearner.from_dict(learners_item_data)

            learners.append(learners_item)

        learners_total = d.pop("learners_total")

        page = d.pop("page")

        pages = d.pop("pages")

        quiet = cast(list[str], d.pop("quiet"))

        stale_citations = []
        _stale_citations = d.pop("stale_citations")
        for stale_citations_item_data in _stale_citations:
            stale_citations_item = ClassStale.from_dict(stale_citations_item_data)

            stale_citations.append(stale_citations_item)

        struggling = []
        _struggling = d.pop("struggling")
        for struggling_item_data in _struggling:
            struggling_item = ClassConcept.from_dict(struggling_item_data)

            struggling.append(struggling_item)

        class_view = cls(
            at=at,
            concepts=concepts,
            concepts_total=concepts_total,
            course=course,
            learners=learners,
            learners_total=learners_total,
            page=page,
            pages=pages,
            quiet=quiet,
            stale_citations=stale_citations,
            struggling=struggling,
        )

        class_view.additional_properties = d
        return class_view

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
