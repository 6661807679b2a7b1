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
# AGENTLOG_JWT_SECRET is required: without it the server refuses to listen on anything but loopback, and says so.
CMD ["agentlog", "serve", "--host", "0.0.0.0", "--port", "8000"]
