"""A consistent backup of the whole service (database + var/ files); see docs/operations.md."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import backup


class Command(BaseCommand):
    help = "Write a backup directory: a pg_dump of the database plus the secret and demo keys of var/."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", default=None, help="Directory to write into (default: var/backups).")

    def handle(self, *args: object, **options: object) -> None:
        target = Path(options["output"] or Path(settings.VAR_DIR) / "backups")
        try:
            result = backup.backup(target, progress=lambda step: self.stdout.write(f"  {step}…"))
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(
            f"backup written to {result.path} (database {result.dump_bytes / 1e6:.1f} MB, "
            f"files: {', '.join(result.files) or 'none'})"))
