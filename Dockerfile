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
# The embedded database lives here unless AGENTLOG_DATABASE_URL names a PostgreSQL one (see compose.yaml).
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"]
# Set AGENTLOG_DATABASE_URL (postgres://user@host:5432/db) and AGENTLOG_JWT_SECRET when running:
#   docker run -e AGENTLOG_JWT_SECRET="$(openssl rand -hex 32)" -e AGENTLOG_DATABASE_URL=... -p 8000:8000 agentlog
# Without AGENTLOG_JWT_SECRET the server refuses to listen on 0.0.0.0 and exits 2.
CMD ["agentlog", "serve", "--host", "0.0.0.0", "--port", "8000"]
