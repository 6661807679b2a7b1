FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY graph ./graph
COPY models ./models
COPY permissions ./permissions
COPY resolvers ./resolvers
RUN pip install . && useradd --system --home /data agentlog && mkdir -p /data && chown agentlog /data

USER agentlog
WORKDIR /data
EXPOSE 8000
# Set AGENTLOG_DATABASE_URL (postgres://user@host:5432/db) and AGENTLOG_JWT_SECRET when running:
#   docker run -e AGENTLOG_JWT_SECRET="$(openssl rand -hex 32)" -e AGENTLOG_DATABASE_URL=... -p 8000:8000 agentlog
# Without AGENTLOG_JWT_SECRET the server refuses to listen on 0.0.0.0 and exits 2.
CMD ["agentlog", "serve", "--host", "0.0.0.0", "--port", "8000"]
