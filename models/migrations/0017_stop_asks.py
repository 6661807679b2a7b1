from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0016_reviews_and_holds')]

    initial = False

    operations = [
        ops.AddField(model_name='AgentTask', name='stops', field=fields.TextField(null=True)),
    ]
