"""The stored rows, one tortoise model a file (`models/__init__.py` names them lazily: `from models import AgentTask`).
They may import `models.db` and each other, nothing above `models/`."""
