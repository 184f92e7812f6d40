"""Every label the report views print, in Korean and English, in one table.

The templates are shared by both languages; they only look labels up here. Headings the
parsers read (``5. Clarification Items``, ``5.5 Stage Map``, the §5 column names, the
predicted-files line) keep their English key words in both languages, as the seed template does.
"""

from __future__ import annotations

LANGUAGES = ("ko", "en")

# key: (Korean, English)
LABELS: dict[str, tuple[str, str]] = {
    # Title block
    "report": ("최종 보고서", "Final report"),
    "task": ("Task", "Task"),
    "phase": ("단계", "Phase"),
    "run": ("Run", "Run"),
    "author": ("작성", "Author"),
    "owner": ("책임", "Owner"),
    "generatedAt": ("작성 시각", "Written at"),
    # Reader summary
    "readerSummary": ("먼저 읽을 요약 (Reader Summary)", "Reader Summary"),
    "decision": ("결정", "Decision"),
    "humanAction": ("사람이 할 일", "Human action"),
    "blockers": ("막고 있는 것", "Blockers"),
    "skippableAudit": ("처음엔 건너뛰어도 되는 부분", "Safe to skip on a first read"),
    "recommendedCommand": ("권장 명령", "Recommended command"),
    "readerFallback": (
        "Reader Summary 가 없어 Verdict Card 로 대신합니다.",
        "No reader summary was written; the verdict card stands in for it.",
    ),
    # Approval block (implementation-planning)
    "approvalTitle": ("User Approval Request (사용자 승인 게이트)", "User Approval Request"),
    "approvalIntro": (
        "다음 implementation run 은 아래 체크박스가 [x] 일 때만 시작할 수 있습니다. 5 절에서 "
        "Blocks=approval 인 행이 모두 resolved 또는 obsolete 인지 확인한 뒤 승인하세요.",
        "The next implementation run may start only when the box below is ticked. Make sure "
        "every Blocks=approval row of section 5 is resolved or obsolete first.",
    ),
    "approvalMethodA": (
        "방법 A — 이 파일에서 [ ] 를 [x] 로 바꿔 저장합니다. 첫 stage claim 이 승인을 기록합니다",
        "Method A — change [ ] to [x] in this file and save; the first stage claim records it",
    ),
    "approvalMethodB": (
        "방법 B — 명령 하나로 5 절을 확인하고 체크한 뒤 승인을 기록합니다",
        "Method B — one command checks section 5, ticks the box and records the approval",
    ),
    # Section titles
    "carryIn": (
        "0. Clarification Response Carried In From Previous Run (이전 run 의 답변 반영)",
        "0. Clarification Response Carried In From Previous Run",
    ),
    "carrySource": ("반영한 파일", "Source file"),
    "incremental": (
        "0.1 Incremental Re-Verification Scope (증분 재검증 범위)",
        "0.1 Incremental Re-Verification Scope",
    ),
    "mode": ("모드", "Mode"),
    "reverifyStages": ("재검증 stage", "Re-verified stages"),
    "carryStages": ("이월 stage", "Carried stages"),
    "reason": ("이유", "Reason"),
    "summary": ("1. 요약 (Summary)", "1. Summary"),
    "consensus": ("1.1 합의 (Consensus)", "1.1 Consensus"),
    "differences": ("1.2 이견 (Differences)", "1.2 Differences"),
    "finalVerdict": ("2. 최종 판단 (Final Verdict)", "2. Final Verdict"),
    "verdictToken": ("Verdict token", "Verdict token"),
    "direction": ("방향", "Direction"),
    "nextStep": ("다음 단계", "Next step"),
    "rationale": ("근거", "Rationale"),
    "verificationTarget": ("2.1 검증 범위 (Verification Scope)", "2.1 Verification Scope"),
    "scope": ("범위", "Scope"),
    "stages": ("Stage", "Stages"),
    "base": ("Base", "Base"),
    "head": ("HEAD", "HEAD"),
    "sourceReports": ("Stage 별 구현 보고서", "Source implementation reports"),
    "evidence": ("3. 증거와 상세 분석 (Evidence)", "3. Evidence and Detailed Analysis"),
    "primaryEvidence": ("3.1 1차 증거 (Primary Evidence)", "3.1 Primary Evidence"),
    "secondaryEvidence": ("3.2 보조 증거 (Secondary)", "3.2 Secondary Evidence"),
    "risks": ("4. 누락 정보와 위험 (Risks)", "4. Missing Information and Risks"),
    "acceptanceBlockers": ("4.1 Acceptance Blockers", "4.1 Acceptance Blockers"),
    "residualRisks": ("4.2 Residual Risks (잔여 위험)", "4.2 Residual Risks"),
    "critic": ("Acceptance critic", "Acceptance critic"),
    "criticCounts": (
        "후보 {proposed}건 → blocker 확인 {confirmed}건, residual risk 강등 {downgraded}건 "
        "(버린 후보 없음)",
        "{proposed} candidate(s) proposed → {confirmed} confirmed as blockers, {downgraded} "
        "downgraded to residual risks (none dropped)",
    ),
    "criticOff": ("사용하지 않음", "not used"),
    "planItems": ("4.5 Plan-body verification", "4.5 Plan-Body Verification"),
    "clarification": ("5. Clarification Items (확인 요청 항목)", "5. Clarification Items"),
    "clarificationGuide": (
        "User input 칸을 채운 뒤 이 명령으로 같은 phase 를 다시 실행합니다",
        "Fill in the User input cells, then rerun the phase with",
    ),
    "columnGuide": (
        "Kind ∈ material / decision / data-point · Blocks ∈ approval / next-phase / none · "
        "Status ∈ open / answered / resolved / obsolete",
        "Kind ∈ material / decision / data-point · Blocks ∈ approval / next-phase / none · "
        "Status ∈ open / answered / resolved / obsolete",
    ),
    "stageMap": ("5.5 Stage Map", "5.5 Stage Map"),
    "stageExitContract": ("Stage Exit Contract", "Stage Exit Contract"),
    "predictedFiles": ("추가/변경된 파일 (예측)", "Added/changed files (predicted)"),
    "nextSteps": ("6. 권장 다음 단계 (Recommended Next Steps)", "6. Recommended Next Steps"),
    "followUps": ("7. 후속 작업 (Follow-up Tasks)", "7. Follow-up Tasks"),
    "executionStatus": ("실행 상태 (Execution Status by Agent)", "Execution Status by Agent"),
    # Table columns
    "record": ("항목", "Record"),
    "ticket": ("Ticket", "Ticket"),
    "source": ("출처", "Source"),
    "sourceItems": ("Source items", "Source items"),
    "oneLine": ("한 줄 요약", "Summary"),
    "statement": ("내용", "Statement"),
    "evidenceColumn": ("근거", "Evidence"),
    "workers": ("Worker 입장", "Workers"),
    "disagreement": ("이견", "Disagreement"),
    "sourceLine": ("출처 (path:line)", "Source (path:line)"),
    "hypothesis": ("가설 또는 보조 근거", "Hypothesis or supporting evidence"),
    "sourceConfidence": ("출처 / 확신도", "Source / confidence"),
    "item": ("항목", "Item"),
    "riskIfIgnored": ("무시할 때의 위험", "Risk if ignored"),
    "mitigationOwner": ("완화 / 담당", "Mitigation / owner"),
    "severity": ("심각도", "Severity"),
    "followUpPhase": ("후속 phase", "Follow-up phase"),
    "trigger": ("격상 조건", "Trigger"),
    "stage": ("Stage", "Stage"),
    "kind": ("Kind", "Kind"),
    "verdict": ("판정", "Verdict"),
    "carriedFrom": ("이월 출처 run", "Carried from run"),
    "origin": ("Origin", "Origin"),
    "newTaskId": ("Task ID", "Task ID"),
    "suggestedTaskType": ("제안 phase", "Suggested phase"),
    "autoSpawn": ("Auto-spawn", "Auto-spawn"),
    "priority": ("우선순위", "Priority"),
    "taskScope": ("범위", "Scope"),
    "deferReason": ("이유 (보류 사유)", "Reason / why deferred"),
    "agent": ("Agent", "Agent"),
    "role": ("역할", "Role"),
    "model": ("모델", "Model"),
    "status": ("상태", "Status"),
    "tokens": ("토큰 (raw / billable)", "Tokens (raw / billable)"),
    "cost": ("비용", "Cost"),
    "duration": ("소요 시간", "Duration"),
    "keyFindings": ("주요 발견 요약", "Summary of key findings"),
    "title": ("Title", "Title"),
    "effectiveSteps": ("Effective steps", "Effective steps"),
    "dependsOn": ("Depends-on", "Depends-on"),
    "none": ("(none)", "(none)"),
    # §5 columns: the English name first, so the §5 reader knows the column in both languages.
    "c5.id": ("ID", "ID"),
    "c5.ticketId": ("Ticket ID", "Ticket ID"),
    "c5.kind": ("Kind", "Kind"),
    "c5.statement": ("Statement (무엇이 필요한지 + 왜)", "Statement"),
    "c5.expectedForm": ("Expected form (답·자료의 모양)", "Expected form"),
    "c5.blocks": ("Blocks", "Blocks"),
    "c5.status": ("Status", "Status"),
    "c5.userInput": ("User input (사용자가 다음 run 전에 채움)", "User input"),
    # Empty-state lines
    "empty.summary": ("- 요약할 항목 없음.", "- Nothing to summarise."),
    "empty.consensus": ("- 합의 항목 없음.", "- No consensus items."),
    "empty.differences": ("- 합의 미달 항목 없음.", "- No differences between workers."),
    "empty.primary": ("- 1차 증거 없음.", "- No primary evidence."),
    "empty.secondary": ("- 보조 증거 없음.", "- No secondary evidence."),
    "empty.risks": ("- 확인된 위험 없음.", "- No open risks."),
    "empty.blockers": ("- Acceptance blocker 없음.", "- No acceptance blockers."),
    "empty.residual": ("- 잔여 위험 없음.", "- No residual risks."),
    "empty.planItems": ("- 검증한 plan 항목 없음.", "- No plan items verified."),
    "empty.clarification": (
        "- 추가 정보 요청 없음. Section 2의 최종 판단이 그대로 유효합니다.",
        "- No clarification needed. The final verdict in section 2 stands.",
    ),
    "empty.followUps": ("- 후속 작업 없음.", "- No follow-up tasks."),
    "empty.execution": ("- 기록된 실행 상태 없음.", "- No execution status recorded."),
    "empty.carryIn": ("- 반영한 항목 없음.", "- No prior rows to reconcile."),
    # HTML view
    "readerMode": ("읽기 모드", "Reader mode"),
    "exportResponse": ("Export user response", "Export user response"),
    "exportHint": (
        "User input 칸에 입력한 뒤 내보내면 user-responses/ 에 두는 파일이 만들어집니다.",
        "Type your answers in the User input boxes, then export the file to keep under "
        "user-responses/.",
    ),
    "responseTitle": ("사용자 응답", "User response"),
    "noTicket": ("(Ticket 없음)", "(no ticket)"),
}


def labels(language: str) -> dict[str, str]:
    """The labels of one language, by key."""
    column = LANGUAGES.index(language)
    return {key: pair[column] for key, pair in LABELS.items()}
