#!/usr/bin/perl
# The newest decision holds: sequences of decisions run through
# bin/cmrx-dict as a user runs them, with the clock moved by CMRX_DICT_NOW
# (no server: train --all on files of get responses). After every staged
# time has passed, writers use what the last decision says: a retrain
# staged for an hour then one staged for 60 s; a rollback staged for an
# hour then a retrain staged for 60 s; a staged first dictionary that a
# rollback cancels (writers stay on the fallback); a rollback to a
# dictionary whose file is missing, and train --all into a folder of
# dictionaries without a manifest, refused with nothing changed; history
# as text and JSON, the same for --prefix npm and npm: (after a prune
# too); several decisions in one second, ordered as made; a clock behind
# the log and damaged manifests refused, naming both times or the line
# and the check, no byte changed; a set of the development format 1
# refused with what to do; --json numbers written as numbers.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Copy ();
use File::Spec ();
use File::Temp ();
use POSIX ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXTest::DictSets qw(corpus_halves run_dict write_dump @FIXED_TUNING);
use CMRXTest::Peers qw(slurp);

plan skip_all => 'JSON::PP is needed to read the --json output' unless eval { require JSON::PP; 1 };

my $Set = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $TMP = File::Temp->newdir;
my $T0 = 2_000_000_000;
my $HOUR = 3600;

# Samples of one prefix, more in each, and other values under its keys:
# a retrain on more (or other) values takes less memory than the
# dictionary before, so that train --all replaces it.
my ($train) = corpus_halves(qw(npm gh));
my @npm = @{ $train->{npm} };
my @other = map { (my $key = $_->[0]) =~ s/\Agh:/npm:/; [ $key, @$_[ 1 .. $#$_ ] ] } @{ $train->{gh} };
my %values = (few => write_dump("$TMP/few.values", @npm[0 .. 15]),
              mid => write_dump("$TMP/mid.values", @npm[0 .. 39]),
              all => write_dump("$TMP/all.values", @npm),
              other => write_dump("$TMP/other.values", @other));

sub date { POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) }

# cmrx-dict at time $at; returns (exit status, stdout, stderr).
sub dict_at {
    my ($at, @args) = @_;
    local $ENV{CMRX_DICT_NOW} = $at;
    return run_dict(\@args);
}

sub json_at {
    my ($at, @args) = @_;
    my ($status, $out, $err) = dict_at($at, @args, '--json');
    is $status, 0, "cmrx-dict @args[0 .. 1] --json at T0+" . ($at - $T0) . ': exit 0' or diag $err;
    return eval { JSON::PP->new->decode($out) } || {};
}

# train --all of the npm values of $which into $dir at $at; returns the
# dictionary it added (its ID), checking it did.
sub train_at {
    my ($at, $dir, $which, @stage) = @_;
    my ($status, $out, $err) = dict_at($at, 'train', '--all', @stage, '--out-dir', $dir, @FIXED_TUNING,
                                       '--prefix', 'npm', '--if-better', '0', $values{$which});
    is $status, 0, "train --all on the $which values at T0+" . ($at - $T0) . ': exit 0' or diag $err;
    my ($id) = $out =~ /^\s+npm:\s+(?:added|replaced)\s+([0-9]+)\s/m;
    ok defined $id, '... it adds a dictionary for npm:' or diag $out;
    return $id || 0;
}

# The ID the writers of npm: use at $at, as list says (0: the fallback).
sub writer_at {
    my ($dir, $at) = @_;
    my ($current) = grep { $_->{state} eq 'current' && $_->{prefix} eq 'npm:' }
                    @{ json_at($at, 'list', '--dictionaries', $dir)->{dictionaries} || [] };
    return $current ? $current->{id} : 0;
}

# ---- (a) a retrain staged 1h, then 10 s later one staged 60 s ------------------------

my $a = "$TMP/a";
my $first = train_at($T0, $a, 'few', '--stage', '0');
my $hour = train_at($T0 + 100, $a, 'mid');                      # staged an hour (the default)
my $minute = train_at($T0 + 110, $a, 'all', '--stage', '60s');
is writer_at($a, $T0 + 150), $first, '(a) before either staged time: the first';
is writer_at($a, $T0 + 110 + 62), $minute, '(a) after the 60 s one\'s time: it';
is writer_at($a, $T0 + 100 + $HOUR + 2), $minute, '(a) after the hour too: still the last decision, not the older one';
is writer_at($a, $T0 + 10 * $HOUR), $minute, '(a) ... and ever after';
is $Set->read($a)->current('npm:', at => $T0 + 10 * $HOUR)->{id}, $minute, '(a) the writers of the module agree';
my ($hour_row) = grep { $_->{id} == $hour } @{ json_at($T0 + 10 * $HOUR, 'list', '--dictionaries', $a)->{dictionaries} };
is $hour_row->{state}, 'retired', '(a) the one staged an hour never took effect: retired';

# ---- (b) a rollback staged 1h, then a retrain staged 60 s ----------------------------

my $b = "$TMP/b";
my $b1 = train_at($T0, $b, 'few', '--stage', '0');
my $b2 = train_at($T0 + 100, $b, 'mid', '--stage', '0');
my $r = json_at($T0 + 200, 'rollback', '--dictionaries', $b, '--prefix', 'npm:', '--stage', '1h');
is_deeply [ @$r{qw(kind from to at_once)} ], [ 'rollback', $b2, $b1, 0 ], '(b) a rollback to the first, staged an hour';
my $b3 = train_at($T0 + 210, $b, 'other', '--stage', '60s');
is writer_at($b, $T0 + 210 + 62), $b3, '(b) after the retrain\'s time: the retrain';
is writer_at($b, $T0 + 200 + $HOUR + 2), $b3, '(b) after the rollback\'s hour: still the retrain (the newest decision)';

# ---- (c) a staged first dictionary, cancelled --------------------------------------

my $c = "$TMP/c";
my $c1 = train_at($T0, $c, 'few');    # a new set: staged an hour
is writer_at($c, $T0 + 10), 0, '(c) the first dictionary is staged: writers use the fallback';
my ($status, $out, $err) = dict_at($T0 + 20, 'rollback', '--dictionaries', $c, '--prefix', 'npm');
is $status, 0, '(c) rollback --prefix npm (without the delimiter) while it is staged: exit 0' or diag $err;
like $out, qr/^Cancelled decision 1 \(train of dictionary $c1, due \Q${\ date($T0 + $HOUR + 1)}\E\): writers of npm: stay on the fallback\.$/m,
    '(c) it cancels the staged first dictionary, and says so';
is writer_at($c, $T0 + 2 * $HOUR), 0, '(c) after its time: writers stay on the fallback';
ok !$Set->read($c)->current('npm:', at => $T0 + 2 * $HOUR), '(c) ... as the module says';
($status, $out, $err) = dict_at($T0 + 30, 'rollback', '--dictionaries', $c, '--prefix', 'npm:');
is $status, 1, '(c) a second rollback: nothing to cancel or go back to, exit 1';
like $err, qr/has no earlier dictionary to go back to/, '(c) ... saying so';

# ---- (d) a rollback to a dictionary whose file is missing ---------------------------

my $d = "$TMP/d";
my $d1 = train_at($T0, $d, 'few', '--stage', '0');
my $d2 = train_at($T0 + 100, $d, 'mid', '--stage', '0');
my ($file) = map { $_->{file} } grep { $_->{id} == $d1 } $Set->read($d)->entries;
unlink "$d/$file" or die "unlink $d/$file: $!";
my $manifest = slurp("$d/manifest");
($status, $out, $err) = dict_at($T0 + 200, 'rollback', '--dictionaries', $d, '--prefix', 'npm:');
is $status, 1, '(d) rollback to a dictionary whose file is missing: exit 1';
like $err, qr/\Q$d\/$file\E: cannot read dictionary $d1 .*refused, nothing changed/, '(d) ... naming the file';
is slurp("$d/manifest"), $manifest, '(d) ... and the set is unchanged';
is writer_at($d, $T0 + 10 * $HOUR), $d2, '(d) writers stay on the current one';
($status, $out, $err) = dict_at($T0 + 200, 'rollback', '--dictionaries', $d, '--prefix', 'npm:', '--to', $d1);
is $status, 1, '(d) ... with --to too';

# ---- (e) train --all into dictionaries without a manifest ----------------------------

my $e = "$TMP/e";
mkdir $e or die "mkdir $e: $!";
File::Copy::copy("$d/$_->{file}", "$e/$_->{file}") or die "copy: $!" for grep { -e "$d/$_->{file}" } $Set->read($d)->entries;
my @before = sort glob "$e/*";
($status, $out, $err) = dict_at($T0, 'train', '--all', '--out-dir', $e, @FIXED_TUNING, '--prefix', 'npm', $values{few});
is $status, 1, '(e) train --all into a folder of .dict files without a manifest: exit 1';
like $err, qr/holds dictionaries \(npm-$d2\.dict\) but no manifest/, '(e) ... saying what it found';
like $err, qr/To start over, give an empty folder, or remove those files/, '(e) ... and how to start over';
is_deeply [ sort glob "$e/*" ], \@before, '(e) ... nothing changed';

# ---- (f) history -------------------------------------------------------------------

($status, $out, $err) = dict_at($T0 + 10 * $HOUR, 'history', '--dictionaries', $a);
is $status, 0, '(f) history: exit 0' or diag $err;
like $out, qr/^The decisions of the dictionary set in \Q$a\E, at \Q${\ date($T0 + 10 * $HOUR)}\E: 3 decisions$/m,
    '(f) a heading';
like $out, qr/^\s*1\s+\Q${\ date($T0)}\E\s+\Q${\ date($T0)}\E\s+npm:\s+train\s+$first\s+took effect$/m,
    '(f) the first train, which took effect';
like $out, qr/^\s*2\s+\Q${\ date($T0 + 100)}\E\s+\Q${\ date($T0 + 100 + $HOUR + 1)}\E\s+npm:\s+train\s+$hour\s+superseded by 3$/m,
    '(f) the one staged an hour, superseded by the next';
like $out, qr/^\s*3\s+\Q${\ date($T0 + 110)}\E\s+\Q${\ date($T0 + 110 + 61)}\E\s+npm:\s+train\s+$minute\s+in effect$/m,
    '(f) the last, in effect';
my $h = json_at($T0 + 10 * $HOUR, 'history', '--dictionaries', $a, '--prefix', 'npm');
is_deeply [ map { [ @$_{qw(seq kind dictionary status)} ] } @{ $h->{decisions} } ],
    [ [ 1, 'train', $first, 'took effect' ], [ 2, 'train', $hour, 'superseded' ], [ 3, 'train', $minute, 'in effect' ] ],
    '(f) history --json --prefix npm: the same decisions';
is $h->{decisions}[1]{superseded_by}, 3, '(f) ... what superseded what';
is_deeply json_at($T0 + 10 * $HOUR, 'history', '--dictionaries', $a, '--prefix', 'npm:')->{decisions}, $h->{decisions},
    '(f) --prefix npm: means the same as npm';
my $cancel = json_at($T0 + 100, 'history', '--dictionaries', $c)->{decisions};
is_deeply [ map { [ @$_{qw(seq kind status)} ] } @$cancel ], [ [ 1, 'train', 'superseded' ], [ 2, 'cancel', 'took effect' ] ],
    '(f) the cancelled first dictionary: superseded by the cancel';
is $cancel->[1]{cancels}, 1, '(f) ... which says what it cancelled';
is json_at($T0 + 100, 'history', '--dictionaries', $c, '--prefix', 'gh:')->{decisions}[0], undef,
    '(f) a prefix without decisions: none';

# ---- (g) several decisions in one second ----------------------------------------------

my $g = "$TMP/g";
my $g1 = train_at($T0, $g, 'few', '--stage', '0');
my $g2 = train_at($T0, $g, 'all');    # staged an hour, in the same second
$r = json_at($T0, 'rollback', '--dictionaries', $g, '--prefix', 'npm:');
is_deeply [ $r->{kind}, $r->{cancelled}{id} ], [ 'cancel', $g2 ], '(g) a rollback in the same second cancels it';
$r = json_at($T0, 'rollback', '--dictionaries', $g, '--prefix', 'npm:', '--to', $g2);
is_deeply [ @$r{qw(kind to at_once)} ], [ 'rollback', $g2, 0 ], '(g) --to the cancelled one (never used): staged again';
$r = json_at($T0, 'rollback', '--dictionaries', $g, '--prefix', 'npm:', '--to', $g2, '--stage', '0');
is_deeply [ @$r{qw(kind to at_once)} ], [ 'rollback', $g2, 1 ], '(g) ... then at once, in the same second';
$r = json_at($T0, 'rollback', '--dictionaries', $g, '--prefix', 'npm:');
is_deeply [ @$r{qw(kind from to at_once)} ], [ 'rollback', $g2, $g1, 1 ], '(g) ... and back to the first at once';
is writer_at($g, $T0), $g1, '(g) at that second: the last decision';
is writer_at($g, $T0 + 10 * $HOUR), $g1, '(g) ... and after every staged time';
is_deeply [ map { [ @$_{qw(seq kind status)} ] } @{ json_at($T0, 'history', '--dictionaries', $g)->{decisions} } ],
    [ [ 1, 'train', 'took effect' ], [ 2, 'train', 'superseded' ], [ 3, 'cancel', 'took effect' ],
      [ 4, 'rollback', 'superseded' ], [ 5, 'rollback', 'took effect' ], [ 6, 'rollback', 'in effect' ] ],
    '(g) history: six decisions in one second, in the order made';

# ---- (h) time only moves forward, a log that cannot be true -------------------------

{
    my $manifest = slurp("$a/manifest");
    my ($status, $out, $err) = dict_at($T0 + 105, 'train', '--all', '--out-dir', $a, @FIXED_TUNING,
                                       '--prefix', 'npm', $values{all});
    is $status, 1, '(h) train --all with a clock behind the log: exit 1';
    like $err, qr/\Acmrx-dict: the clock says \Q${\ date($T0 + 105)}\E, earlier than the newest line of the set's log \(line \d+, \Q${\ date($T0 + 110)}\E\): time only moves forward: nothing was changed; run it where the clock is right\n\z/,
        '(h) ... naming both times, in one line for people';
    is slurp("$a/manifest"), $manifest, '(h) ... the file unchanged';

    my $d = "$TMP/damaged";
    mkdir $d or die "$d: $!";
    File::Copy::copy("$a/$_", "$d/$_") or die "copy $_: $!" for map { (File::Spec->splitpath($_))[2] } glob "$a/*.dict";
    my $decisions = () = $manifest =~ /^decision /mg;
    my %damage = (
        'effective before made' => [ sub { s/^(decision seq=2 .* made=)(\S+) effective=\S+$/${1}$2 effective=${\ date($T0)}/m },
                                     qr/effective \Q${\ date($T0)}\E is before made \Q${\ date($T0 + 100)}\E/ ],
        'a missing dictionary'  => [ sub { s/^(decision seq=2 .*) dictionary=\d+/$1 dictionary=5/m },
                                     qr/dictionary '5' is on no dictionary line before it/ ],
        'a seq repeated'        => [ sub { s/^decision seq=3 /decision seq=2 /m },
                                     qr/seq '2', where seq 3 is next: a seq repeated, out of order or missing/ ],
        'made times going back' => [ sub { $_ .= 'decision seq=' . ($decisions + 1) . ' kind=cancel prefix=npm: made='
                                           . date($T0 + 50) . ' effective=' . date($T0 + 50) . "\n" },
                                     qr/time order: made \Q${\ date($T0 + 50)}\E is earlier than line \d+'s \Q${\ date($T0 + 110)}\E/ ],
        'a writer removed'      => [ sub { $_ .= "removed id=$first prefix=npm: removed=" . date($T0 + 120) . "\n" },
                                     qr/dictionary $first is removed while the writers of its prefix use it/ ],
        'a dictionary twice'    => [ sub { s/^(dictionary id=$first .*\n)/$1$1/m },
                                     qr/dictionary ID $first is listed twice/ ],
    );
    for my $name (sort keys %damage) {
        my ($change, $says) = @{ $damage{$name} };
        local $_ = $manifest;
        $change->() or die "$name: no change\n";
        my $bad = $_;
        open my $fh, '>', "$d/manifest" or die $!;
        print {$fh} $bad;
        close $fh;
        for my $command ([ 'rollback', '--dictionaries', $d, '--prefix', 'npm' ], [ 'list', '--dictionaries', $d ]) {
            my ($status, $out, $err) = dict_at($T0 + 10 * $HOUR, @$command);
            is $status, 1, "(h) $name: $command->[0] exits 1";
            like $err, qr/\Acmrx-dict: \Q$d\E\/manifest: line \d+: .*$says.*: refused, nothing changed\n\z/,
                "(h) ... naming the line and the check";
        }
        is slurp("$d/manifest"), $bad, "(h) $name: ... the file left as it is";
    }

    # A set made by the development versions (format 1): refused, saying
    # how to make a new one; nothing changed.
    my $old = "$TMP/format1";
    mkdir $old or die "$old: $!";
    my $text = "cmrx-dictionary-set 1\nset id=3f0c9a5be1d24c8e9b7a6d5c4b3a2f10 created=2026-05-01T10:00:00Z "
             . "decisions=1,train,1777629600,1777629600,1,user: decisions_of=0c1d2e3f4a5b6c7d\n"
             . "dictionary id=1 prefix=user: state=current decided=current file=user-1.dict level=9 size=16384 "
             . 'sha256=' . ('0' x 64) . "\nend dictionaries=1\n";
    open my $fh, '>', "$old/manifest" or die $!;
    print {$fh} $text;
    close $fh;
    for my $command ([ 'list', '--dictionaries', $old ], [ 'train', '--all', '--out-dir', $old, $values{few} ]) {
        my ($status, $out, $err) = dict_at($T0, @$command);
        is $status, 1, "(h) a format-1 set: $command->[0] exits 1";
        like $err, qr/line 1: format 1 was written by a development version that was never released; .*make a new set in an empty folder \(cmrx-dict train --all --out-dir NEWDIR\)/,
            '(h) ... saying how to make a new one';
    }
    is slurp("$old/manifest"), $text, '(h) ... and its manifest is as it was';
}

# ---- (i) after a prune: --prefix npm and npm: the same; numbers as numbers -----------

{
    my $empty = write_dump("$TMP/empty.values");
    my ($status, $out, $err) = dict_at($T0 + 30 * 86400, 'prune', '--dictionaries', $a, '--retired-for', '0', $empty);
    is $status, 0, '(i) prune of the retired dictionaries: exit 0' or diag $err;
    ok !grep({ $_->{prefix} eq 'npm:' && $_->{state} ne 'removed' && $_->{id} != $minute }
             @{ json_at($T0 + 30 * 86400, 'list', '--dictionaries', $a)->{dictionaries} }),
        '(i) ... only the writers\' dictionary is left of npm:';
    my $bare = json_at($T0 + 30 * 86400, 'history', '--dictionaries', $a, '--prefix', 'npm');
    is scalar @{ $bare->{decisions} }, 3, '(i) history --prefix npm: its 3 decisions';
    is_deeply $bare->{decisions}, json_at($T0 + 30 * 86400, 'history', '--dictionaries', $a, '--prefix', 'npm:')->{decisions},
        '(i) ... as --prefix npm: has them';
    my $list = do { local $ENV{CMRX_DICT_NOW} = $T0 + 30 * 86400; (run_dict([ 'list', '--dictionaries', $a, '--json' ]))[1] };
    like $list, qr/"savings" *: *[0-9.]+[,}\s]/, '(i) list --json: savings a number';
    unlike $list, qr/"(?:savings|samples|level|size|id)" *: *"/, '(i) ... and no number written as a string';
    my ($status2, $train) = dict_at($T0 + 30 * 86400, 'train', '--all', '--out-dir', "$TMP/numbers", @FIXED_TUNING,
                                    '--stage', '0', '--json', $values{all});
    is $status2, 0, '(i) train --all --json: exit 0';
    unlike $train, qr/"[a-z_]+" *: *"-?[0-9]+(?:\.[0-9]+)?"/, '(i) ... no number written as a string';
}

done_testing;
