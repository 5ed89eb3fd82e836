#!/usr/bin/perl
# The mutation check of the lifecycle model (t/64): the model test run
# against deliberately broken versions of the set's fold, of rollback, of
# prune and of what the set keeps for release 0.101, each in a child
# process where the broken sub replaces the distribution's (a module
# loaded by PERL5OPT, so that bin/cmrx-dict's own processes run it too).
# Every mutant must be caught: t/64 fails. The distribution unbroken must
# pass. Lists each mutant with whether it was caught and the first
# failure it caused.
#
#   prove -b xt/set-lifecycle-mutants.t      # about 3 minutes
use strict;
use warnings;

use Test::More;
use File::Temp ();

my %MUTANT = (
    # The state's rule "the open entry that started last": a superseded
    # staged decision takes over once its time comes after the one in effect.
    'an older staged decision taking over' => <<'PERL',
use Cache::Memcached::RustXS::Zstd::DictionarySet::State ();
my $fold = \&Cache::Memcached::RustXS::Zstd::DictionarySet::State::fold;
*Cache::Memcached::RustXS::Zstd::DictionarySet::State::fold = sub {
    my ($decisions, $at) = @_;
    my $f = $fold->(@_);
    for my $prefix (keys %{ $f->{prefixes} }) {
        my $p = $f->{prefixes}{$prefix};
        my ($late) = sort { $b->{effective} <=> $a->{effective} }
                     grep { $_->{prefix} eq $prefix && defined $_->{id} && defined $_->{effective}
                            && $_->{effective} <= $at && $_->{effective} > (defined $p->{since} ? $p->{since} : -1)
                            && ($f->{decisions}{ $_->{seq} }{status} || '') eq 'superseded' } @$decisions;
        next unless $late;
        $f->{used}{ $p->{writer} }{until} = $late->{effective} if defined $p->{writer};
        @$p{qw(before writer since seq)} = ($p->{writer}, $late->{id}, $late->{effective}, $late->{seq});
        $f->{used}{ $late->{id} } = { from => $late->{effective} };
        $f->{decisions}{ $late->{seq} }{status} = 'in effect';
    }
    return $f;
};
PERL
    # A rollback while something is pending says it cancelled it, and
    # records nothing.
    'a pending decision not cancelled by a rollback' => <<'PERL',
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
*Cache::Memcached::RustXS::Zstd::DictionarySet::cancel = sub {
    my ($self, $prefix) = @_;
    my $pending = $self->decided($prefix)->{pending} or die "cancel: nothing is pending\n";
    return { %$pending };
};
PERL
    'prune ignoring --retired-for' => <<'PERL',
use Cache::Memcached::RustXS::Dict::Prune ();
my $prune = \&Cache::Memcached::RustXS::Dict::Prune::prune_set;
*Cache::Memcached::RustXS::Dict::Prune::prune_set = sub { my %opt = @_; $opt{retired_for} = 0; $prune->(%opt) };
PERL
    # Prune sampling nothing: no value names any dictionary.
    'prune ignoring sampled values still naming a dictionary' => <<'PERL',
use Cache::Memcached::RustXS::Dict::Prune ();
use Cache::Memcached::RustXS::Dict::Files ();
use File::Temp ();
my $prune = \&Cache::Memcached::RustXS::Dict::Prune::prune_set;
my $empty = File::Temp->new;
print {$empty} "END\r\n";
close $empty;
*Cache::Memcached::RustXS::Dict::Prune::prune_set = sub {
    my %opt = @_;
    $opt{source} = Cache::Memcached::RustXS::Dict::Files->read([ "$empty" ]);
    return $prune->(%opt);
};
PERL
    # A dictionary's file unread: a missing one passes.
    'a rollback accepting a missing file' => <<'PERL',
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
my $bytes = \&Cache::Memcached::RustXS::Zstd::DictionarySet::dictionary_bytes;
*Cache::Memcached::RustXS::Zstd::DictionarySet::dictionary_bytes = sub {
    my @got = eval { $bytes->(@_) };
    return @got ? $got[0] : '';
};
PERL
    # The entries written for release 0.101 (which reads only `state`)
    # taking up what is staged: 0.101 would write with a dictionary its
    # readers may not hold yet.
    'entries for 0.101 taking up a staged dictionary' => <<'PERL',
use Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions ();
my $project = \&Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions::project_entries;
*Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions::project_entries = sub {
    my ($entries) = @_;
    $project->(@_);
    for my $staged (grep { ($_->{decided} || '') eq 'staged' } @$entries) {
        $_->{state} = 'retired' for grep { $_->{prefix} eq $staged->{prefix} } @$entries;
        $staged->{state} = 'current';
    }
    return;
};
PERL
    # What 0.101 changed read from its entries alone, the log dropped.
    'a set 0.101 retrained read without its log' => <<'PERL',
use Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions ();
*Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions::reconcile_log = sub { return };
PERL
);

# Runs t/64 with $code loaded first in every perl process; returns (exit
# status, the first failure it printed).
sub run_model_test {
    my ($code) = @_;
    my $tmp = File::Temp->newdir;
    open my $fh, '>', "$tmp/CMRXMutant.pm" or die "$tmp/CMRXMutant.pm: $!";
    print {$fh} "package CMRXMutant;\nuse strict;\nuse warnings;\nno warnings 'redefine';\n$code\n1;\n";
    close $fh or die "$tmp/CMRXMutant.pm: $!";
    local $ENV{PERL5OPT} = "-I$tmp -MCMRXMutant";
    local $ENV{CMRX_LIFECYCLE_SEQUENCES} = $ENV{CMRX_LIFECYCLE_SEQUENCES} || 4;
    my $inc = join ' ', map { "-I$_" } grep { !ref } @INC;
    my $out = `$^X $inc t/64-set-lifecycle-model.t 2>&1`;
    my $status = $? >> 8;
    # The first failed test (not a TODO one) and the first step it printed.
    my ($failed) = grep { /\Anot ok / && !/\A[^\n]*# TODO/ } split /^(?=(?:not )?ok \d)/m, $out;
    return ($status, undef) unless defined $failed;
    my ($first) = $failed =~ /^# (step \d+: .*|seed \d+ .*)$/m;
    return ($status, defined $first ? $first : ($failed =~ /\A(not ok [^\n]*)/)[0]);
}

my ($status, $first) = run_model_test('');
is $status, 0, 'the model test passes on the distribution as it is' or diag $first;

my @rows;
for my $name (sort keys %MUTANT) {
    my ($s, $why) = run_model_test($MUTANT{$name});
    push @rows, sprintf '  %-58s %s', $name, $s ? 'caught' : 'SURVIVED';
    ok $s, "mutant caught: $name";
    diag "  first failure: " . (defined $why ? $why : '?') if $s;
}
diag "mutants of the fold, of prune and of what 0.101 reads, run against the model test (t/64):\n" . join "\n", @rows;

done_testing;
