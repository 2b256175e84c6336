package api

import (
	"strings"
	"testing"
	"time"
)

func TestExplainFailure(t *testing.T) {
	others := []OtherSandbox{
		{Agent: "ag-000000000001", Sandbox: "s1", MemBytes: 600 << 20, Running: true},
		{Agent: "ag-000000000002", Sandbox: "s2", MemBytes: 40 << 20},
	}
	tests := []struct {
		name        string
		resp        ExecResponse
		report      failureReport
		wantFailure string
		want        []string // substrings of Message
	}{
		{
			name: "oom with others", resp: ExecResponse{OOM: true, PeakBytes: 812 << 20},
			report: failureReport{Budget: 1 << 30, Others: others}, wantFailure: FailureOOM,
			want: []string{"out of memory", "peak of 812.0 MiB", "budget of 1.00 GiB", "2 other sandboxes held 640.0 MiB",
				"ag-000000000001 600.0 MiB (running a command)", "ag-000000000002 40.0 MiB (idle)", "files under the workspace are kept"},
		},
		{
			name: "oom alone", resp: ExecResponse{OOM: true, PeakBytes: 2 << 30},
			report: failureReport{Budget: 2 << 30}, wantFailure: FailureOOM,
			want: []string{"peak of 2.00 GiB", "no other sandbox was live"},
		},
		{
			name: "timeout", resp: ExecResponse{TimedOut: true, PeakBytes: 3 << 20},
			report: failureReport{Timeout: 30 * time.Second, Budget: 1 << 30, Others: others}, wantFailure: FailureTimeout,
			want: []string{"timed out", "timeout of 30s", "peak memory 3.0 MiB", "sandbox and its files are kept"},
		},
		{name: "success", resp: ExecResponse{ExitCode: 1}, report: failureReport{Budget: 1 << 30, Others: others}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := tt.resp
			explainFailure(&resp, tt.report)
			if resp.Failure != tt.wantFailure {
				t.Errorf("Failure = %q, want %q", resp.Failure, tt.wantFailure)
			}
			if tt.wantFailure == "" {
				if resp.Message != "" || resp.Others != nil || resp.BudgetBytes != 0 {
					t.Errorf("a successful action got a failure report: %+v", resp)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.Message, w) {
					t.Errorf("Message lacks %q:\n%s", w, resp.Message)
				}
			}
			if resp.BudgetBytes != tt.report.Budget || len(resp.Others) != len(tt.report.Others) {
				t.Errorf("budget %d others %d, want %d and %d", resp.BudgetBytes, len(resp.Others), tt.report.Budget, len(tt.report.Others))
			}
		})
	}
}

func TestOthersTextBounded(t *testing.T) {
	var others []OtherSandbox
	for i := range maxOthers + 3 {
		others = append(others, OtherSandbox{Agent: "ag", MemBytes: int64(i) << 20})
	}
	got := othersText(others)
	if !strings.Contains(got, "8 other sandboxes") || !strings.Contains(got, "3 more") || strings.Count(got, "(idle)") != maxOthers {
		t.Errorf("othersText = %q", got)
	}
}
