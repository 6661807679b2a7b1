from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0007_prices_and_otlp_spans')]

    initial = False

    operations = [
        ops.CreateModel(
            name='SignedCheckpoint',
            fields=[
                ('root_id', fields.UUIDField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('size', fields.IntField()),
                ('head', fields.CharField(max_length=64)),
                ('note', fields.TextField(unique=False)),
            ],
            options={'table': 'checkpoint', 'app': 'agentlog', 'pk_attr': 'root_id',
                     'table_description': 'The latest signed note over one tree\'s head.'},
            bases=['Model'],
        ),
    ]
