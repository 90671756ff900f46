"""Links people and clients open: the screen's pages and the API's files of a job, a sheet and
a project, in one place. Built on ``SHEETFLOW_PUBLIC_URL`` (where the deployment is reached),
or relative to it when that is unset; never from a request's Host. Events carry them
(``links``), and so webhook payloads; a signed-in person opens them in a browser, and an API
client opens the API's with its token (or asks for a signed link, ``GET …/link``)."""

from urllib.parse import quote

from pydantic import BaseModel, Field

_JOB = "j_4f9c2b7e1a6d4c0e9b8a7f6e5d4c3b2a"


class JobLinks(BaseModel):
    """Where a job can be opened."""

    screen: str = Field(description="the set on the screen", examples=[f"/app/jobs/{_JOB}"])
    report: str = Field(examples=[f"/v1/jobs/{_JOB}/report"])
    report_html: str = Field(examples=[f"/v1/jobs/{_JOB}/report.html"])
    sheets_csv: str = Field(examples=[f"/v1/jobs/{_JOB}/sheets.csv"])
    sheets_zip: str = Field(description="every sheet as its own PDF")
    set_pdf: str = Field(description="the set bookmarked and linked")


class SheetLinks(BaseModel):
    """Where one page of a job can be opened."""

    screen: str = Field(examples=[f"/app/jobs/{_JOB}/pages/4"])
    pdf: str = Field(
        description="the sheet as its own PDF", examples=[f"/v1/jobs/{_JOB}/sheets/page-4.pdf"]
    )


class ProjectLinks(BaseModel):
    """Where a project's register, and one of its sheets, can be opened."""

    screen: str = Field(examples=["/app/projects/tower-b"])
    api: str = Field(description="the register", examples=["/v1/projects/tower-b/sheets"])
    sheet: str | None = Field(None, description="the sheet's versions on the screen")
    change: str | None = Field(None, description="the sheet's latest change on the screen")


def base(public_url: str | None) -> str:
    return (public_url or "").rstrip("/")


def job_links(public_url: str | None, job_id: str) -> JobLinks:
    root, api = f"{base(public_url)}/app/jobs/{job_id}", f"{base(public_url)}/v1/jobs/{job_id}"
    return JobLinks(
        screen=root,
        report=f"{api}/report",
        report_html=f"{api}/report.html",
        sheets_csv=f"{api}/sheets.csv",
        sheets_zip=f"{api}/sheets.zip",
        set_pdf=f"{api}/set.pdf",
    )


def sheet_links(public_url: str | None, job_id: str, page_number: int) -> SheetLinks:
    return SheetLinks(
        screen=f"{base(public_url)}/app/jobs/{job_id}/pages/{page_number}",
        pdf=f"{base(public_url)}/v1/jobs/{job_id}/sheets/page-{page_number}.pdf",
    )


def project_links(
    public_url: str | None,
    project: str,
    sheet_key: str | None = None,
    change: tuple[int, int] | None = None,
) -> ProjectLinks:
    screen = f"{base(public_url)}/app/projects/{project}"
    sheet = f"{screen}/sheets/{quote(sheet_key, safe='')}" if sheet_key else None
    return ProjectLinks(
        screen=screen,
        api=f"{base(public_url)}/v1/projects/{project}/sheets",
        sheet=sheet,
        change=f"{sheet}/change?from={change[0]}&to={change[1]}" if sheet and change else None,
    )
