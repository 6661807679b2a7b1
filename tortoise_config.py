from models.db import database_url, tortoise_config

TORTOISE_ORM = tortoise_config(database_url())
