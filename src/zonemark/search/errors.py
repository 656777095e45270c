"""The search service's refusals: each message is one line meant for the person who asked."""


class SearchError(Exception):
    """The search cannot run (bad filter, unusable Python build, unreadable layer)."""


class QueryError(SearchError):
    """The query or a filter cannot be used as given (empty query, FTS5 syntax error in raw mode, bad date)."""


class SearchUnavailable(SearchError):
    """This Python's ``sqlite3`` module was built without FTS5."""
