"""`looma verify`: recompute op ids, history, projections and notes; exit non-zero on drift."""

from __future__ import annotations

import dataclasses

import click


@click.command("verify")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def verify_cmd(ctx: click.Context, as_json: bool) -> None:
    """Check refs/looma/ledger and refs/notes/looma against each other.

    \b
    - every op's id is the sha256 of its content (tampering shows up here);
    - the ledger is append-only across its whole history;
    - workitems/*.yaml, memories/*.yaml and every note equal the fold of the ops.
    Exit status 6 when anything is wrong; each problem names the op or path.
    A drift in projections or notes (e.g. after a crash) is repaired by the next write.
    """
    from looma_git.api.ledger import verify
    from looma_git.errors import VerifyError
    from looma_git.gitrepo import find_repo

    report = verify(find_repo(ctx.obj.get("repo_dir") if ctx.obj else None))
    if as_json:
        from looma_git.cli.common import emit_json
        from looma_git.wire.ledger import ProblemOut, VerifyOut

        emit_json(VerifyOut(ok=report.ok, ops=report.ops, commits_checked=report.commits_checked,
                            problems=[ProblemOut(**dataclasses.asdict(p))
                                      for p in report.problems], warnings=report.warnings))
    else:
        for w in report.warnings:
            click.echo(f"warning: {w}", err=True)
        for p in report.problems:
            click.echo(f"problem: [{p.kind}] {(p.op_id or '')[:10] + ': ' if p.op_id else ''}"
                       f"{p.message}")
        if report.ok:
            click.echo(f"looma: ledger ok ({report.ops} ops, {report.commits_checked} commits)")
    if not report.ok:
        raise VerifyError(f"{len(report.problems)} problem(s) found",
                          hint="projection/note drift is repaired by the next looma write; "
                               "rejected ops are skipped by every fold")
