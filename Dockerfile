# One image for the web (Daphne) and worker (Celery) processes of docker-compose.yml.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# bubblewrap isolates source tools in the sandboxed executor; libseccomp2 compiles its seccomp filter.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml manage.py ./
COPY config ./config
COPY accounts ./accounts
COPY agents ./agents
COPY tools ./tools
COPY templates ./templates
COPY static ./static
# Editable, so BASE_DIR (templates, static) is /app whichever way a process starts.
RUN pip install -e .

# Static files are collected at build time and served by WhiteNoise; the key is only for this step.
RUN SECRET_KEY=collectstatic-only FIELD_ENCRYPTION_KEY=collectstatic-only python manage.py collectstatic --noinput

RUN useradd --system --uid 10001 --home-dir /app app
USER app

EXPOSE 8000
CMD ["python", "-m", "daphne", "--bind", "0.0.0.0", "--port", "8000", "config.asgi:application"]
