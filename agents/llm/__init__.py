"""Model providers behind one interface.

``base`` is the interface; ``anthropic``, ``openai`` and ``demo`` implement it;
``registry.get_llm_client`` turns a ``provider/model`` handle into a client;
``retry.with_retries`` is the one place calls are retried. Nothing is imported
here, so ``agents.llm.base`` stays free of Django and SDK imports.
"""
