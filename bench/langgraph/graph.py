# The one-node LangGraph graph that bench/langgraph-compare.ts runs on LangGraph's Agent Server
# (`langgraph dev`, in-memory), the counterpart of one turn of this service's agent: the node sends
# the thread's messages to the OpenAI-compatible model at OPENAI_BASE_URL (the project's scripted
# model, the same one our side uses) through langchain-openai's ChatOpenAI, streaming, so that
# stream_mode "messages" relays each token as the model writes it.
import os

from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph

model = ChatOpenAI(
    model="scripted-base",
    base_url=os.environ["OPENAI_BASE_URL"],
    api_key=os.environ.get("OPENAI_API_KEY", "bench-scripted-model"),
    streaming=True,
    max_retries=0,
)


async def agent(state: MessagesState) -> dict:
    return {"messages": [await model.ainvoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
graph = builder.compile()
