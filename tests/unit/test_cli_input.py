"""`sheetflow run` checks its input before anything starts, with the API's own messages:
a text file, a renamed .docx, an encrypted PDF, a directory, a truncated set."""

import zipfile
from pathlib import Path

import pymupdf
import pytest
from typer.testing import CliRunner

from shared.infra.settings import Settings
from sheetflow import cli
from sheetflow.cli import commands
from tests.support.pdfs import add_notes_page, make_pdf

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"


def docx(path: Path) -> None:
    """A minimal Word document (a zip) saved under a .pdf name."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", "<document>GENERAL NOTES</document>")


def encrypted(path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "SECRET")
    path.write_bytes(
        doc.tobytes(encryption=pymupdf.mupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    )


@pytest.mark.parametrize(
    ("name", "make", "says"),
    [
        ("README.md", lambda p: p.write_text("# sheetflow\n"), "no PDF header) (not_a_pdf)"),
        ("specs.pdf", docx, "no PDF header) (not_a_pdf)"),
        ("locked.pdf", encrypted, "password-protected; upload an unprotected copy"),
        ("sheets", lambda p: p.mkdir(), "is a directory"),
        ("cut.pdf", lambda p: p.write_bytes(EXAMPLE.read_bytes()[:5000]), "(corrupt_pdf)"),
    ],
)
def test_run_refuses_bad_input_before_starting_anything(tmp_path, monkeypatch, name, make, says):
    """Each bad input exits 1 with the API's sentence, and nothing is started or written."""
    monkeypatch.chdir(tmp_path)
    make(tmp_path / name)
    result = runner.invoke(cli.app, ["run", name])
    assert result.exit_code == 1, result.output
    assert says in result.output.replace("\n", " ")
    assert "Traceback" not in result.output
    assert [p.name for p in tmp_path.iterdir()] == [name], "nothing is started or written"


def test_a_good_pdf_passes_the_check(tmp_path):
    """A plain PDF is accepted by the same check (and not rewritten)."""
    pdf = tmp_path / "set.pdf"
    pdf.write_bytes(make_pdf(add_notes_page))
    settings = Settings(_env_file=None)
    assert commands.accepted_pdf(pdf, settings) == pdf
    assert [p.name for p in tmp_path.iterdir()] == ["set.pdf"]
