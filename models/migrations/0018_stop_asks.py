from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0014_keyed_by_tenant')]

    initial = False

    operations = [
        ops.AddField(model_name='AgentTask', name='stops', field=fields.TextField(null=True)),
    ]
