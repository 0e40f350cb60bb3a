"""Azure OpenAI: OpenAI's chat completions through the ``openai`` SDK's ``AsyncAzureOpenAI``.

The model name is the deployment's: the SDK sends ``/openai/deployments/<model>/chat/completions``
at the resource's endpoint with the ``api-version`` query and the ``api-key`` header. Payloads,
decoding and errors are ``agents.llm.openai``'s.
"""

from __future__ import annotations

import openai

from agents.llm.connections import shared_sdk_client
from agents.llm.openai import OpenAIClient
from agents.llm.sdk import Timeouts


class AzureOpenAIClient(OpenAIClient):
    provider = "azure"

    def __init__(self, *, api_key: str, base_url: str, api_version: str, timeouts: Timeouts | None = None) -> None:
        super().__init__(api_key=api_key, base_url=base_url, timeouts=timeouts)
        self.api_version = api_version

    @property
    def is_compatible_server(self) -> bool:
        return False

    def _sdk(self) -> openai.AsyncOpenAI:
        key = (self.provider, self.api_key, self.base_url, self.api_version, self.timeouts)
        return shared_sdk_client(key, self._new_sdk)

    def _new_sdk(self) -> openai.AsyncOpenAI:
        options = self._sdk_options(timeout=openai.Timeout, http_client=openai.DefaultAsyncHttpxClient)
        endpoint = options.pop("base_url")
        return openai.AsyncAzureOpenAI(azure_endpoint=endpoint, api_version=self.api_version, **options)
