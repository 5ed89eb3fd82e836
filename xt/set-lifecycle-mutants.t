#!/usr/bin/perl
# The mutation check of the lifecycle model (t/64): the model test run
# against deliberately broken versions of the set's fold, of rollback, of
# prune, of the checks of the log and of the clock, each in a child
# process where the broken code replaces the distribution's (a module
# loaded by PERL5OPT, so that bin/cmrx-dict's own processes run it too:
# a sub replaced, or a module's own source changed by one substitution and
# loaded before anything imports from it).
# Every mutant must be caught: t/64 fails. The distribution unbroken must
# pass. Lists each mutant with whether it was caught and the first
# failure it caused.
#
#   prove -b xt/set-lifecycle-mutants.t      # about 3 minutes
use strict;
use warnings;

use Test::More;
use File::Temp ();

# A mutant that loads module $file with one substitution of its source
# (the text $from, which must be there, replaced by $to), before anything
# imports from it.
sub mutated_source {
    my ($file, $from, $to) = @_;
    return sprintf <<'PERL', $file, $from, $to;
my ($file, $from, $to) = (q{%s}, q{%s}, q{%s});
my ($dir) = grep { -e "$_/$file" } @INC or die "CMRXMutant: no $file in \@INC
";
open my $fh, '<', "$dir/$file" or die "CMRXMutant: $dir/$file: $!
";
my $source = do { local $/; <$fh> };
my $at = index $source, $from;
die "CMRXMutant: the text to change is not in $file
" if $at < 0;
substr($source, $at, length $from) = $to;
$INC{$file} = "$dir/$file";
eval "#line 1 $dir/$file
$source; 1" or die "CMRXMutant: $file: $@";
PERL
}

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
    # The fold in the order of made times, not of seq: decisions made in
    # one second taken in another order (the newest first).
    'the fold ordered by made time' => mutated_source('Cache/Memcached/RustXS/Zstd/DictionarySet/State.pm',
        q{sort { $a->{seq} <=> $b->{seq} } grep { $_->{made} <= $at }},
        q{sort { $a->{made} <=> $b->{made} || $b->{seq} <=> $a->{seq} } grep { $_->{made} <= $at }}),
    'an effective time before its made time accepted' => mutated_source(
        'Cache/Memcached/RustXS/Zstd/DictionarySet/Manifest.pm',
        q{if epoch_of($f->{effective}) < epoch_of($f->{made});}, q{if 0;}),
    'a decision naming a missing dictionary accepted' => mutated_source(
        'Cache/Memcached/RustXS/Zstd/DictionarySet/Manifest.pm',
        q{" is on no dictionary line before it\n" unless $e;}, q{" is on no dictionary line before it\n" if 0;
            $e ||= { prefix => $f->{prefix} };}),
    'a clock behind the log accepted' => mutated_source('Cache/Memcached/RustXS/Zstd/DictionarySet.pm',
        q{if $newest && $now < $newest->{time};}, q{if 0;}),
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
diag "mutants of the fold, of prune, of the log's checks and of the clock, run against the model test (t/64):\n"
   . join "\n", @rows;

done_testing;
