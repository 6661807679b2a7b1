from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('agentlog', '0003_task_list_indexes')]

    initial = False

    operations = [
        ops.AddIndex(
            model_name='LlmCall',
            index=Index(fields=['task_id', 'turn']),
        ),
    ]
