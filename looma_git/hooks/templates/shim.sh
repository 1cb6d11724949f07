#!/bin/sh
# looma-shim v2: installed by `looma hooks install`, removed by `looma hooks uninstall`.
# One script for post-commit, post-rewrite, post-merge, post-checkout and pre-push: the hook
# name comes from $0 (without the `.legacy` suffix of pre-commit's slot or the `.looma` of ours).
# Contract: never changes what git does or prints. A foreign hook that was here is kept as
# <hook>.looma-chained and runs first with the same arguments and stdin; its exit status is
# the only status git sees. Everything looma does goes to <git-common-dir>/looma/hooks.log.
# Nothing happens in a repository where `looma init` has not run (no <common-dir>/looma/clone-id).
# post-commit runs no Python: it appends "<sha> <unix time>" to the queue and starts
# at most one detached `looma hook drain` (at most a `git rev-parse` and a `date` on the path).
LOOMA_PYTHON='@PYTHON@'
looma_nl='
'
case $0 in */*) looma_dir=${0%/*} ;; *) looma_dir=. ;; esac
LOOMA_HOOK=${0##*/}
LOOMA_HOOK=${LOOMA_HOOK%.legacy}
LOOMA_HOOK=${LOOMA_HOOK%.looma}

# Per-worktree git dir, common dir (shared state) and HEAD. Fast path with shell
# builtins only (hooks run at the top of the work tree; a branch ref is loose right after a
# commit); anything unusual (GIT_* exported, reftable, packed ref) asks git with one rev-parse.
looma_gd= looma_cd= looma_head=
if [ -z "${GIT_DIR:-}${GIT_WORK_TREE:-}${GIT_COMMON_DIR:-}" ]; then
    if [ -d .git ]; then
        looma_gd=.git
    elif [ -f .git ]; then
        IFS= read -r looma_l 2>/dev/null <.git
        case $looma_l in 'gitdir: '*) looma_gd=${looma_l#gitdir: } ;; esac
    fi
fi
if [ -n "$looma_gd" ] && [ -f "$looma_gd/HEAD" ]; then
    looma_cd=$looma_gd
    if [ -f "$looma_gd/commondir" ]; then
        IFS= read -r looma_l 2>/dev/null <"$looma_gd/commondir"
        case $looma_l in /*) looma_cd=$looma_l ;; *) looma_cd=$looma_gd/$looma_l ;; esac
    fi
    IFS= read -r looma_l 2>/dev/null <"$looma_gd/HEAD"
    case $looma_l in
        'ref: refs/'*) [ -f "$looma_cd/${looma_l#ref: }" ] &&
                           IFS= read -r looma_head 2>/dev/null <"$looma_cd/${looma_l#ref: }" ;;
        *) looma_head=$looma_l ;;
    esac
    case $looma_head in *[!0-9a-f]*) looma_head= ;; esac
    [ ${#looma_head} -eq 40 ] || [ ${#looma_head} -eq 64 ] || looma_head=
    [ -d "$looma_cd/reftable" ] && looma_head=
fi
if [ -z "$looma_head" ]; then
    looma_rp=$(git rev-parse --git-dir --git-common-dir HEAD 2>/dev/null)
    looma_gd=${looma_rp%%"$looma_nl"*}
    looma_rest=${looma_rp#*"$looma_nl"}
    looma_cd=${looma_rest%%"$looma_nl"*}
    looma_head=${looma_rest#*"$looma_nl"}
    case $looma_head in *"$looma_nl"*|HEAD|'') looma_head= ;; esac
    [ "$looma_rest" = "$looma_rp" ] && looma_cd=
fi
looma_st=${looma_cd:+$looma_cd/looma}

# post-rewrite and pre-push read stdin; it is kept in memory so the chained hook sees it too.
looma_in=
case $LOOMA_HOOK in post-rewrite|pre-push)
    looma_in=$(cat 2>/dev/null; echo .)
    looma_in=${looma_in%.} ;;
esac

looma_run_chained() {
    # A plain sh hook is sourced with $0 set to the hook's own path, so hooks that locate their
    # siblings through $0 (husky's `.husky/_/h`) still find them; anything else is executed.
    looma_first=
    IFS= read -r looma_first 2>/dev/null <"$looma_chained"
    case $looma_first in
        '#!/bin/sh'|'#!/usr/bin/sh'|'#!/usr/bin/env sh')
            set -- sh -c '. "$0.looma-chained"' "$looma_dir/$LOOMA_HOOK" "$@" ;;
        *) set -- "$looma_chained" "$@" ;;
    esac
    case $LOOMA_HOOK in
        post-rewrite|pre-push) printf '%s' "$looma_in" | "$@" ;;
        *) "$@" ;;
    esac
}

looma_status=0
looma_chained="$looma_dir/$LOOMA_HOOK.looma-chained"
if [ -f "$looma_chained" ] && [ -x "$looma_chained" ]; then
    looma_run_chained "$@"
    looma_status=$?
fi

# From here on nothing reaches the user's terminal, and no failure changes the exit status.
case $LOOMA_HOOK in post-commit|post-rewrite|post-merge|post-checkout|pre-push) ;;
    *) exit "$looma_status" ;;
esac
[ -n "$looma_st" ] && [ -f "$looma_st/clone-id" ] || exit "$looma_status"
unset GIT_INDEX_FILE
exec </dev/null >/dev/null 2>&1
looma_log="$looma_st/hooks.log"
true >>"$looma_log" || looma_log=/dev/null

looma_say() {
    printf 'looma-hook %s %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$LOOMA_HOOK" "$*"
}

looma_rebasing() {
    # Only a rebase defers: its post-rewrite catches up with every commit it made.
    [ -d "$looma_gd/rebase-merge" ] || [ -f "$looma_gd/rebase-apply/rebasing" ]
}

looma_launch() {
    # Start `looma ARGS` detached, at lower priority, logging to hooks.log; $! is its pid.
    if [ -x "$LOOMA_PYTHON" ]; then
        set -- "$LOOMA_PYTHON" -m looma_git "$@"
    elif command -v looma >/dev/null 2>&1; then
        set -- looma "$@"
    elif command -v git-looma >/dev/null 2>&1; then
        set -- git looma "$@"
    else
        looma_say "error: looma not found (interpreter $LOOMA_PYTHON is gone; no looma or git-looma on PATH)"
        return 1
    fi
    # Lower priority: the drainer must not slow down the git commands that follow it.
    command -v nice >/dev/null 2>&1 && set -- nice -n 10 "$@"
    command -v setsid >/dev/null 2>&1 && set -- setsid "$@"
    nohup "$@" </dev/null >>"$looma_log" 2>&1 &
}

looma_alive() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null
}

looma_drain() {
    # At most one drainer, decided here in the shell before any Python starts:
    # drain.wanted (an empty file, written by a builtin) says work is waiting; a running
    # drainer (its pid in drain.lock) looks for it after every pass and after releasing its
    # lock, so we are done. Otherwise the one shim whose `mkdir drain.spawn` succeeds launches
    # the drainer and writes its pid there; the drainer removes drain.spawn once it holds the lock.
    : >"$looma_st/drain.wanted"
    looma_pid=
    [ -f "$looma_st/drain.lock" ] && read -r looma_pid 2>/dev/null <"$looma_st/drain.lock"
    looma_alive "$looma_pid" && return 0
    looma_spawn="$looma_st/drain.spawn"
    if ! mkdir "$looma_spawn" 2>/dev/null; then
        looma_pid=
        if [ -f "$looma_spawn/pid" ]; then
            read -r looma_pid 2>/dev/null <"$looma_spawn/pid"
        elif [ -z "$(find "$looma_spawn" -maxdepth 0 -mmin +1 2>/dev/null)" ]; then
            return 0  # another shim is launching one this very moment
        fi
        looma_alive "$looma_pid" && return 0
        looma_say "stale $looma_spawn (drainer ${looma_pid:-?} is gone): launching another"
        rm -rf "$looma_spawn"
        mkdir "$looma_spawn" 2>/dev/null || return 0
    fi
    looma_launch hook drain || { rm -rf "$looma_spawn"; return 0; }
    printf '%s\n' "$!" >"$looma_spawn/pid"
}

looma_work() {
    looma_queue=${LOOMA_HOOK_QUEUE:-$looma_st/queue}
    case $LOOMA_HOOK in
    post-commit)
        [ -n "$looma_head" ] || { looma_say "error: cannot read HEAD"; return 0; }
        printf '%s %s\n' "$looma_head" "$(date +%s)" >>"$looma_queue" ||
            { looma_say "error: cannot append to $looma_queue (disk full or not writable)"; return 0; }
        looma_rebasing && { looma_say "rebase in progress: queued $looma_head only"; return 0; }
        looma_drain ;;
    post-rewrite)
        looma_kind=${1:-unknown}
        looma_now=$(date +%s)
        printf '%s' "$looma_in" | while read -r looma_old looma_new looma_x; do
            [ -n "$looma_new" ] && printf '%s %s %s %s\n' "$looma_old" "$looma_new" "$looma_kind" "$looma_now"
        done >>"$looma_st/rewrites" ||
            { looma_say "error: cannot append to $looma_st/rewrites"; return 0; }
        [ "$looma_kind" = amend ] && looma_rebasing && return 0
        looma_drain ;;
    post-merge)
        looma_rebasing || looma_drain ;;
    post-checkout)
        # $3 = 1 for a branch checkout; file checkouts change no history.
        [ "$3" = 1 ] && ! looma_rebasing && looma_drain ;;
    pre-push)
        # Never blocks or slows a push: when sharing is enabled (any looma.share/curation key)
        # and the push goes ahead (a chained hook exited 0), one detached `looma hook pre-push`
        # waits for this push to finish, and only if the pushed refs landed drains what is
        # queued and syncs looma's refs; otherwise waiting commits only kick the drainer.
        if [ "$looma_status" = 0 ] &&
            git config --get-regexp '^looma[.](share|curation)[.]' >/dev/null 2>&1; then
            set -- "${1:-origin}" --git-pid "$PPID"
            looma_refs=$(printf '%s' "$looma_in" | while read -r looma_lr looma_ls looma_rr looma_rs; do
                [ -n "$looma_rr" ] && printf ' %s:%s' "$looma_ls" "$looma_rr"
            done)
            for looma_r in $looma_refs; do set -- "$@" --pushed "$looma_r"; done
            looma_launch hook pre-push "$@"
        else
            [ -s "$looma_st/queue" ] && looma_drain
        fi ;;
    esac
    return 0
}

looma_work "$@" >>"$looma_log" 2>&1
exit "$looma_status"
