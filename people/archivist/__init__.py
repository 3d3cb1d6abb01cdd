"""The archivist: people operations from conversations, by an LLM (`llm`) or by rules (`rules`)."""
