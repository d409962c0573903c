"""An audit of the answer key (``sqlbench audit``, docs/audit.md): the questions whose ground
truth is suspect, with the evidence, most suspect first."""

from sqlbench.audit.suspects import (
    EVIDENCE_KINDS,
    AuditReport,
    Evidence,
    Suspect,
    audit_runs,
)

__all__ = ["EVIDENCE_KINDS", "AuditReport", "Evidence", "Suspect", "audit_runs"]
