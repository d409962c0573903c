"""A command agent to start from: sqlbench runs it once per question (see example.yml).

It reads the request as JSON on stdin: {"name", "space", "question", "dialect", "branch"},
and prints the answer as JSON on stdout: {"sql": "..."} to answer with SQL, {"answer": "..."}
to answer in words (graded review), or {"error": "..."} when it failed. Only the standard
library is used. Replace `answer` with a call to your own agent.
"""

import json
import sys

KNOWN = {
    "revenue": "SELECT date_trunc('month', ordered_at) AS month, SUM(amount) AS revenue "
    "FROM orders WHERE year(ordered_at) = 2024 GROUP BY 1 ORDER BY 1",
    "country": "SELECT c.country, COUNT(*) AS orders FROM orders o "
    "JOIN customers c USING (customer_id) WHERE year(o.ordered_at) = 2024 GROUP BY 1",
}


def answer(request: dict[str, str]) -> dict[str, str]:
    """The answer to one question: SQL where a keyword of the question is known."""
    question = request["question"].lower()
    for keyword, sql in KNOWN.items():
        if keyword in question:
            return {"sql": sql}
    return {"answer": "I do not know how to answer this one yet."}


if __name__ == "__main__":
    print(json.dumps(answer(json.load(sys.stdin))))
