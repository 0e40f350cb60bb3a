"""The default answer when no reply is scripted: deterministic, and enough for Letta's seed flows.

- The user asks for tools ("Call the get_secret_code_tool ... 'hello world'") → reasoning,
  a short text and those calls (only the first one when parallel calls are off).
- The request ends with tool results → reasoning and a text quoting each result, so
  "the secret code is <return>" appears; a denial is quoted with its reason.
- Anything else → reasoning and a short acknowledgement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.llm.intents import describe_tool_result, parse_tool_requests, unwrap_tool_output
from tests.fake_llm.script import Reply

if TYPE_CHECKING:
    from tests.fake_llm.exchange import Exchange

_ECHO_LIMIT = 120


def auto_reply(exchange: Exchange) -> Reply:
    if exchange.tool_results and exchange.user_text is None:
        sentences = [
            describe_tool_result(
                result.name,
                result.content,
                is_error=result.is_error or unwrap_tool_output(result.content).startswith("Error"),
            )
            for result in exchange.tool_results
        ]
        return Reply(reasoning="The tools have answered; I will report what they returned.", text=" ".join(sentences))
    text = exchange.user_text or ""
    calls = parse_tool_requests(text, exchange.tools)
    if calls:
        if not exchange.parallel_tool_calls:
            calls = calls[:1]
        names = ", ".join(dict.fromkeys(call.name for call in calls))
        return Reply(
            reasoning=f"The user asked me to call {names}. I will do that.",
            text=f"I will call {names} now.",
            tool_calls=[(call.name, call.arguments) for call in calls],
        )
    echo = text.strip()[:_ECHO_LIMIT]
    return Reply(reasoning="The user sent a message; I will reply briefly.", text=f"Understood. You said: {echo}")
