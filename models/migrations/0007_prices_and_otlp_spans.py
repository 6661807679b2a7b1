from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0006_task_filters_and_search')]

    initial = False

    operations = [
        ops.AddField(model_name='LlmCall', name='cost_source', field=fields.CharField(default='KIT', db_default='KIT', max_length=16)),
        ops.AddField(model_name='LlmCall', name='cached_input_tokens', field=fields.BigIntField(null=True)),
        ops.CreateModel(
            name='ModelPrice',
            fields=[
                ('id', fields.UUIDField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('model', fields.CharField(max_length=200)),
                ('provider', fields.CharField(null=True, max_length=200)),
                ('input_micros_per_million', fields.BigIntField()),
                ('output_micros_per_million', fields.BigIntField()),
                ('cached_input_micros_per_million', fields.BigIntField(null=True)),
                ('effective_from', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'model_price', 'app': 'agentlog', 'indexes': [Index(fields=['tenant', 'model', 'effective_from'])], 'pk_attr': 'id', 'table_description': 'What one model costs a tenant per million tokens, from a date on.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='OtlpSpan',
            fields=[
                ('id', fields.BigIntField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('trace_id', fields.CharField(max_length=32)),
                ('span_id', fields.CharField(max_length=16)),
                ('parent_span_id', fields.CharField(null=True, max_length=16)),
                ('kind', fields.CharField(max_length=8)),
                ('body', fields.TextField(null=True, unique=False)),
                ('received_us', fields.BigIntField()),
                ('placed', fields.BooleanField(default=False)),
                ('task_id', fields.UUIDField(null=True)),
            ],
            options={'table': 'otlp_span', 'app': 'agentlog', 'unique_together': [('tenant', 'trace_id', 'span_id')], 'indexes': [Index(fields=['placed', 'received_us']), Index(fields=['tenant', 'trace_id', 'placed'])], 'pk_attr': 'id', 'table_description': 'A span taken from an OTLP export, kept from its acknowledgement until it is placed.'},
            bases=['Model'],
        ),
    ]
