package CMRXTest::DictSets;

# Test helper: what the tests of cmrx-dict and of dictionary sets share --
# the corpus split into a training and a held-out half (CMRXDev::Corpus's
# corpus_halves, exported from here), get responses
# written to files, bin/cmrx-dict run with captured output, and the
# reading of its --json reports. See the POD at the end of the file.

use strict;
use warnings;

use Carp qw(croak);
use Exporter 'import';
use File::Spec ();
use Test::More ();

use CMRXTest::DevLib;    # dev/lib, where CMRXDev::Corpus lives
use CMRXDev::Corpus qw(corpus_halves);    # exported from here for the tests
use CMRXTest::Child qw(run_command);
use CMRXTest::Peers qw(spew);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(corpus_halves run_dict dump_of write_dump
                    json_of by_prefix named_by train_whole_cache_set $CORPUS_DIR $SCRIPT @NO_LIMITS
                    @FIXED_TUNING %FIXED_TUNING @AT_ONCE);

our $CORPUS_DIR = 'bench/data/values';
our $SCRIPT     = File::Spec->catfile('bin', 'cmrx-dict');

# Tests never depend on timings (bench/ measures speed): the set commands
# run without speed limits unless a case says otherwise.
our @NO_LIMITS = ('--compress-time', '0', '--decompress-time', '0');

# Tests of the plumbing (reports, a set's writing, prune, pools) tune as
# little as cmrx-dict can: one size, two levels, the two quick methods --
# still a choice among candidates, in a fraction of a full tuning's time.
# The tuner's own tests (t/54, and t/42's train) tune in full.
our @FIXED_TUNING = ('--size', '4096', '--levels', '3,9', '--methods', 'samples,fastcover');
# The same as Dict::Tune's tune takes them.
our %FIXED_TUNING = (sizes => [4096], max_size => 4096, levels => [ 3, 9 ], methods => [qw(samples fastcover)]);

# train --all stages what it adds (an hour by default): the tests that
# write, read or report with the set right after make it current at once.
our @AT_ONCE = ('--stage', '0');

# Runs bin/cmrx-dict with these arguments; returns (exit status, stdout,
# stderr). Set commands that tune (train --all, report --dictionaries) get
# @NO_LIMITS unless the arguments give --compress-time; prune, list,
# rollback and history, which tune nothing and take no speed limits, never do.
sub run_dict {
    my ($args, @opt) = @_;
    croak 'run_dict(\\@args, stdin => ..., perl_args => [...]): options come in pairs' if @opt % 2;
    my %opt = @opt;
    my @unknown = grep { !/\A(?:stdin|perl_args)\z/ } sort keys %opt;
    croak "run_dict: unknown option @unknown" if @unknown;
    my $set_command = ($args->[0] || '') !~ /\A(?:prune|list|rollback|history)\z/
                   && (($args->[1] || '') eq '--all' || grep { $_ eq '--dictionaries' } @$args);
    $args = [ @$args, @NO_LIMITS ] if $set_command && !grep { $_ eq '--compress-time' } @$args;
    my ($status, $out, $err) = run_command([ $^X, @{ $opt{perl_args} || [] }, '-Mblib', $SCRIPT, @$args ],
                                           stdin  => defined $opt{stdin} ? $opt{stdin} : '',
                                           stderr => 'capture');
    return ($status >> 8, $out, $err);
}

# A get response of [key, value] (or [key, value, flags]) items.
sub dump_of {
    my (@items) = @_;
    return join('', map { "VALUE $_->[0] " . ($_->[2] || 0) . ' ' . length($_->[1]) . "\r\n$_->[1]\r\n" } @items)
         . "END\r\n";
}

sub write_dump { my ($path, @items) = @_; return spew($path, dump_of(@items)) }

# The set of t/53 and t/56: train --all --sample $WHOLE_CACHE_SAMPLE
# @FIXED_TUNING on the training halves of gh, npm and compat and 12 keys
# without a delimiter (npm's held-out values), into $tmp/set. Returns (status, stdout, stderr, the set's folder, the
# keys of each prefix in the file, the sample asked).
my $WHOLE_CACHE_SAMPLE = 24;
my $BARE_KEYS          = 12;
sub train_whole_cache_set {
    my ($tmp, $train, $held) = @_;
    my @bare = map { [ "bare$_", $held->{npm}[$_][1] ] } 0 .. $BARE_KEYS - 1;
    my $file = write_dump(File::Spec->catfile($tmp, 'train.values'), map({ @{ $train->{$_} } } qw(gh npm compat)), @bare);
    my $dir = File::Spec->catfile($tmp, 'set');
    my %keys_of = ((map { ($_ => scalar @{ $train->{$_} }) } qw(gh npm compat)), '(none)' => scalar @bare);
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir, '--sample', $WHOLE_CACHE_SAMPLE,
                                      @FIXED_TUNING, (eval { require JSON::PP; 1 } ? '--json' : ()), $file ]);
    return ($st, $out, $err, $dir, \%keys_of, $WHOLE_CACHE_SAMPLE);
}

# A --json report decoded, or {} (and a diag) when it is not JSON.
sub json_of {
    my ($out) = @_;
    return eval { JSON::PP->new->decode($out) } || do { Test::More::diag("not JSON: $@"); {} };
}

# The report's prefixes: prefix => its entry.
sub by_prefix { my ($r) = @_; return { map { ($_->{prefix} => $_) } @{ $r->{prefixes} || [] } } }

# The report's dictionaries: ID => how many sampled values name it.
sub named_by { my ($r) = @_; return { map { ($_->{id} => $_->{named_by}) } @{ $r->{dictionaries} || [] } } }

1;

__END__

=head1 NAME

CMRXTest::DictSets - the corpus halves, get-response files, cmrx-dict runs and --json reports of the cmrx-dict tests

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::DictSets qw(corpus_halves run_dict dump_of write_dump json_of by_prefix named_by @AT_ONCE);

    my ($train, $held) = corpus_halves(qw(gh npm));         # from bench/data/values
    my $file = write_dump("$tmp/train.values", @{ $train->{gh} }, @{ $train->{npm} });
    my ($status, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', "$tmp/set", '--json', $file ]);
    is $status, 0, 'train --all: exit 0' or diag $err;
    my $prefix = by_prefix(json_of($out));                  # 'gh:' => { action => 'added', ... }

    my $today = write_dump("$tmp/today.values", @{ $held->{gh} });
    ($status, $out) = run_dict([ 'report', '--dictionaries', "$tmp/set", '--json', $today ]);
    my $named = named_by(json_of($out));                    # dictionary ID => values naming it

    run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', "$tmp/other", '-' ], stdin => dump_of(@{ $held->{npm} }));

=head1 DESCRIPTION

The tests of the C<cmrx-dict> command (F<t/42-cmrx-dict.t>,
F<t/47-dict-sets.t>, F<t/48-dict-sets-server.t>, F<t/53-whole-cache.t>,
F<t/54-tuner-cost.t>, F<t/55-dict-prune.t>, F<t/56-whole-cache-report.t>,
F<t/60-train-all-stage-ids.t>, F<t/61-sets-made-apart.t>) train on one half of
values and measure on the other, write values as memcached C<get>
responses, run F<bin/cmrx-dict> from the build (C<-Mblib>) and read what
it prints. The functions are exported on request.

=head2 The corpus and its halves

=over 4

=item C<corpus_halves(@families)>

L<CMRXDev::Corpus>'s, exported from here: C<(\%train, \%held)>, family =>
C<[[key, value], ...]> of the corpus split as C<cmrx-dict report> splits
a prefix's values (the benchmark splits it with the same function).

=back

=head2 Files

=over 4

=item C<dump_of(@items)>

A memcached C<get> response (C<VALUE key flags bytes>, the bytes, CRLF,
...; C<END>) of C<[key, value]> or C<[key, value, flags]> items (flags 0
when not given): what C<cmrx-dict> reads from files and standard input.

=item C<write_dump($path, @items)>

Writes C<dump_of(@items)> to C<$path> (CMRXTest::Peers' C<spew>); returns C<$path>.

=back

=head2 Running cmrx-dict

=over 4

=item C<run_dict(\@args, %options)>

Runs C<$SCRIPT> (F<bin/cmrx-dict>) with this perl (C<$^X>), C<-Mblib> and
C<@args>, through L<CMRXTest::Child>'s C<run_command>; returns C<(exit
status, stdout, stderr)>. Tests never depend on timings: a set command
that tunes (C<train --all>, or a C<--dictionaries> one but C<prune>,
C<list> and C<rollback>) gets
C<@NO_LIMITS> (C<--compress-time 0 --decompress-time 0>) appended unless
C<@args> name C<--compress-time>; C<prune>, C<list> and C<rollback>,
which tune nothing and refuse those options, never do. Other commands run with the arguments
as given: a test that wants them without limits gives C<@NO_LIMITS>
itself. Options (any other, or an odd count, dies):

=over 4

=item C<< stdin => $bytes >>

The command's standard input (default: empty).

=item C<< perl_args => [...] >>

Options for perl, before C<-Mblib> (for example C<-I$dir>, to hide a
module).

=back

=item C<@FIXED_TUNING>, C<%FIXED_TUNING>

The options with which tests of the plumbing (reports, a set's writing,
prune, pools) tune: C<--size 4096 --levels 3,9 --methods
samples,fastcover>, a choice among four candidates in a fraction of a full
tuning's time; and the same as L<Cache::Memcached::RustXS::Dict::Tune>'s
C<tune> takes them, for a test that computes what a command must find.
The tuner's own tests (F<t/54-tuner-cost.t>, and F<t/42-cmrx-dict.t>'s
C<train>) tune in full.

=item C<@AT_ONCE>

C<--stage 0>: C<train --all> makes what it adds current at once, for the
tests that write, read or report with the set right after it (by default
it stages what it adds an hour, and writers go on with what they used).

=item C<train_whole_cache_set($tmp, $train, $held)>

The set with a whole-cache entry that F<t/53-whole-cache.t> checks and
F<t/56-whole-cache-report.t> reports on: C<train --all --sample 24>
C<@FIXED_TUNING> (with
C<--json> when L<JSON::PP> loads; C<@AT_ONCE>) on a file, in C<$tmp>, of the training
halves of C<gh>, C<npm> and C<compat> (C<$train> and C<$held> as
C<corpus_halves> returns them) and 12 keys without the delimiter (values of
npm's held-out half), into C<$tmp/set>. Returns
C<(exit status, stdout, stderr, $dir, \%keys_of, $sample)>:
C<%keys_of> counts the keys of each prefix in the file (C<(none)> for
those without the delimiter).

=back

=head2 Reports

=over 4

=item C<json_of($out)>

The C<--json> output decoded with L<JSON::PP> (which the test loads, or
skips without), or C<{}> and a C<diag> saying why when it is not JSON.

=item C<by_prefix($report)>

C<< { prefix => entry } >> of the report's C<prefixes>.

=item C<named_by($report)>

C<< { dictionary ID => named_by } >> of the report's C<dictionaries>: how
many sampled values name each dictionary of the set.

=back

=cut
