"""MemoryHub for LangGraph: a checkpointer that keeps a graph's threads and checkpoints in a MemoryHub campaign.

    from memoryhub_langgraph import MemoryHubSaver

    graph = builder.compile(checkpointer=MemoryHubSaver(base_url="http://memoryhub:8000", api_key=key,
                                                        campaign="demo_moon"))
"""

from memoryhub_langgraph.saver import (
    MemoryHubAuthError,
    MemoryHubConflict,
    MemoryHubError,
    MemoryHubNotFound,
    MemoryHubSaver,
    __version__,
)

__all__ = ["MemoryHubAuthError", "MemoryHubConflict", "MemoryHubError", "MemoryHubNotFound", "MemoryHubSaver",
           "__version__"]
