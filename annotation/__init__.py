"""The human side of curation: votes, adjudication, agreement, audits and metrics."""
