"""skillhouse's tools in the agent frameworks people write agents in, each a small module over
:mod:`skillhouse.client` that binds a turn and routes every call through skillhouse (guest and gateway):

- :mod:`skillhouse.integrations.pydantic_ai`: a pydantic-ai toolset (``pip install 'skillhouse[pydantic-ai]'``)
- :mod:`skillhouse.integrations.langchain`: LangChain tools, for LangGraph too (``skillhouse[langchain]``)
- :mod:`skillhouse.integrations.openai_agents`: OpenAI Agents SDK function tools (``skillhouse[openai-agents]``)
- :mod:`skillhouse.integrations.google_adk`: a Google ADK toolset (``skillhouse[google-adk]``)

Each framework is imported only by its own module: importing skillhouse, or this package, imports none.
What they share, framework-free, is :mod:`skillhouse.integrations.common`.
"""
