"""Restore a backup made by `manage.py backup`, replacing the database's contents."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import backup


class Command(BaseCommand):
    help = "Replace the database and var/'s key files with a backup's. Stop the service first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="A backup directory written by `manage.py backup`.")
        parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation.")

    def handle(self, *args: object, **options: object) -> None:
        path = Path(str(options["path"]))
        # Checked before asking: "yes" to a directory that is no backup only then learnt it was none.
        try:
            manifest = backup.backup_manifest(path)
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from exc
        if not options["yes"]:
            try:
                answer = input(f"Replace everything in the database with {path} (database "
                               f"{manifest.get('database', '?')!r} as of {manifest.get('created_at', '?')})? "
                               "Type 'yes': ")
            except EOFError:  # run from a script or cron, with nobody to answer
                raise CommandError("Restore cancelled: no answer on stdin (pass --yes to restore "
                                   "without asking).") from None
            if answer.strip() != "yes":
                raise CommandError("Restore cancelled.")
        try:
            files = backup.restore(path, progress=lambda step: self.stdout.write(f"  {step}…"))
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"restored {path} (files: {', '.join(files) or 'none'}); "
                                             "start the service again"))
