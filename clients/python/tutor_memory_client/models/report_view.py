from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.belief_view import BeliefView
    from ..models.concept_view import ConceptView
    from ..models.report_view_chain import ReportViewChain
    from ..models.report_view_report import ReportViewReport


T = TypeVar("T", bound="ReportView")


@_attrs_define
class ReportView:
    """
    Attributes:
        beliefs (list[BeliefView]): Current beliefs with every row of their history.
        chain (ReportViewChain):
        concepts (list[ConceptView]): The concept map's nodes, for drawing.
        episodes (int):
        layers (list[list[str]]): Teaching order: layers of concept keys, prerequisites first.
        report (ReportViewReport): The brain's subject report (readiness, checks, calibration, stale
            citations, answers that could not answer, activity by month).
        subject (str):
        title (str):
    """

    beliefs: list[BeliefView]
    chain: ReportViewChain
    concepts: list[ConceptView]
    episodes: int
    layers: list[list[str]]
    report: ReportViewReport
    subject: str
    title: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        beliefs = []
        for beliefs_item_data in self.beliefs:
            beliefs_item = beliefs_item_data.to_dict()
            beliefs.append(beliefs_item)

        chain = self.chain.to_dict()

        concepts = []
        for concepts_item_data in self.concepts:
            concepts_item = concepts_item_data.to_dict()
            concepts.append(concepts_item)

        episodes = self.episodes

        layers = []
        for layers_item_data in self.layers:
            layers_item = layers_item_data

            layers.append(layers_item)

        report = self.report.to_dict()

        subject = self.subject

        title = self.title

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "beliefs": beliefs,
                "chain": chain,
                "concepts": concepts,
                "episodes": episodes,
                "layers": layers,
                "report": report,
                "subject": subject,
                "title": title,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.belief_view import BeliefView
        from ..models.concept_view import ConceptView
        from ..models.report_view_chain import ReportViewChain
        from ..models.report_view_report import ReportViewReport

        d = dict(src_dict)
        beliefs = []
        _beliefs = d.pop("beliefs")
        for beliefs_item_data in _beliefs:
            beliefs_item = BeliefView.from_dict(beliefs_item_data)

            beliefs.append(beliefs_item)

        chain = ReportViewChain.from_dict(d.pop("chain"))

        concepts = []
        _concepts = d.pop("concepts")
        for concepts_item_data in _concepts:
            concepts_item = ConceptView.from_dict(concepts_item_data)

            concepts.append(concepts_item)

        episodes = d.pop("episodes")

        layers = []
        _layers = d.pop("layers")
        for layers_item_data in _layers:
            layers_item = cast(list[str], layers_item_data)

            layers.append(layers_item)

        report = ReportViewReport.from_dict(d.pop("report"))

        subject = d.pop("subject")

        title = d.pop("title")

        report_view = cls(
            beliefs=beliefs,
            chain=chain,
            concepts=concepts,
            episodes=episodes,
            layers=layers,
            report=report,
            subject=subject,
            title=title,
        )

        report_view.additional_properties = d
        return report_view

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
