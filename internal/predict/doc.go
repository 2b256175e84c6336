// Package predict builds action descriptors: before an action runs, it
// predicts the action's average and peak memory (bytes above the sandbox's
// level just before the action), its heavy-memory risk and its priority
// (seed 000 §3.3, evaluated as in Table 2).
//
// Features are causal: the action's class (one-hot over a fixed vocabulary),
// its command as hashed TF-IDF over shape-reduced tokens (see Tokenize), the
// declared hints, and summaries of the same workflow's completed actions
// (count, last/max/mean-of-last-3 peaks, last average, last duration,
// elapsed time, time since the last completion, last/max peak of the same
// class, last peak of the same command, the trend of the peaks, how many
// earlier actions peaked at or above 64 and 256 MiB and how long ago the
// latest at 64 MiB ran), and what the sandbox holds now (its memory usage
// at action-ready, ActionContext.ResidentBytes, and its growth since the
// first action; recorded by the trace importer as before_mib). Nothing
// from the action's own outcome or from later actions is ever read:
// ActionContext has no field that could carry it.
//
// The model is an in-house bagged regression forest (CART trees with
// variance-reduction splits on quantile-binned features) with separate
// forests for average memory, peak memory (both fitted in log1p(MiB / 0.1)
// space by default, DefaultLogScaleMiB: fine enough to keep the many runs
// below 1 MiB apart) and heavy risk (a regression on the 0/1 label "peak above the
// heavy threshold", i.e. a probability). Models are saved as versioned JSON
// ({"format":"tenon-predict","version":1,...}) and loading rejects other
// formats, versions and feature counts with an error naming the file.
//
// Every model is calibrated on its training tasks alone (Quantile): a
// scale forest predicts how far the peak forest misses an action, from
// out-of-fold residuals (5 folds by task); the 90th percentile of the
// residuals divided by the scale widens each prediction to PredP90. The
// point prediction stays the forest's (log-space mean): moving it to the
// conditional median lowered its error but, admitted on, cost 2 OOM kills
// over the 72 simulated real-trace runs where it had none. A model trained on recorded sandbox levels
// assumes the training median level where a host does not give one.
//
// A model of the current feature set adds one rule to its forests: the
// repeat floor. An action that repeats an earlier action of its workflow
// (same class and command skeleton, e.g. the test suite run again after an
// edit) is predicted to peak at least at the median peak of that
// command's latest three runs in the workflow. The forests see the same
// history as features but, trained on a few dozen tasks, shrink a re-run
// toward its class's typical light action.
//
// Three predictors implement Predictor, as in the paper: Static (a model
// trained on class, hint and command features only), HistoryOnly (the
// preceding action's demand, or the class median for a workflow's first
// action) and Current (a model trained on all features).
//
// Training data comes from recorded trajectories (ExamplesFromWorkflows) or
// from tenon's own event log (ExamplesFromRecords over ActionRecord, the
// "action_done" event the replay package writes). SplitByTask keeps all of a
// workflow's actions on one side of a train/validation split, and Evaluate
// reports the Table 2 metrics.
//
// The package is pure computation: it reads no files except the model file
// given to Load and touches no kernel interface.
package predict
