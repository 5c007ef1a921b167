"""Tool calls as the model wrote them: ids made unique in a reply, JSON arguments read by
one rule."""
