"""Columns as wide as the checks allow: a skill version of 200 characters, a path 64 levels deep.

SQLite does not enforce VARCHAR widths, and altering a column there rebuilds the table without the
indexes made by hand in 0002; so the columns are widened on PostgreSQL only, and the state moves on both.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class WidenOnPostgres(ops.AlterField):
    async def database_forward(self, app_label, old_state, new_state, state_editor=None) -> None:
        if state_editor is not None and state_editor.client.capabilities.dialect == "postgres":
            await super().database_forward(app_label, old_state, new_state, state_editor)

    async def database_backward(self, app_label, old_state, new_state, state_editor=None) -> None:
        if state_editor is not None and state_editor.client.capabilities.dialect == "postgres":
            await super().database_backward(app_label, old_state, new_state, state_editor)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0004_llm_call_turn_index')]

    initial = False

    operations = [
        WidenOnPostgres(
            model_name='AgentTask',
            name='path',
            field=fields.CharField(max_length=2404),
        ),
        WidenOnPostgres(
            model_name='AgentTask',
            name='skill_version',
            field=fields.CharField(null=True, max_length=200),
        ),
        WidenOnPostgres(
            model_name='LlmCall',
            name='task_path',
            field=fields.CharField(null=True, max_length=2404),
        ),
    ]
