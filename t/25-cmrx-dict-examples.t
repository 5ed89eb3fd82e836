#!/usr/bin/perl
# cmrx-dict's manual shows what its commands print: the examples of
# "A set's life, from files" (EXAMPLES, cmrx-dict.pod), then the usage
# errors below (what EXIT STATUS says of errors, kept here rather than in
# the manual), run as written, in order, on the files they name, and every
# line they show is printed, in that order, figures aside (the dictionary
# IDs are random and the tuner's sizes, levels and times depend on the
# machine), with the exit status EXIT STATUS gives: 0, or 2 for a usage
# error (its line ends with the pointer to --help) and 1 for a failure.
# run_dict lifts the speed limits, as for every test, so that what the
# lines say in words (the fallback's method) follows from memory alone,
# never from a loaded host's timings.
# The operations guide's check of a host's copy of a set runs on the set
# the examples made.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use File::Temp ();
use CMRXTest::Peers qw(slurp);
use CMRXTest::DictSets qw(run_dict);

my $MANUAL = 'lib/cmrx-dict.pod';

# The examples of a =head2 of EXAMPLES: [[env, \@args, \@shown], ...] from
# its verbatim lines, "$ [NAME=VALUE ...] cmrx-dict ARGS" (continued by a
# trailing backslash) followed by the lines it prints.
sub examples_of {
    my ($pod, $heading) = @_;
    my ($section) = $pod =~ /^=head2 \Q$heading\E\n(.*?)^=head/ms
        or die "$MANUAL: no =head2 $heading\n";
    return examples_in($section);
}

# The examples of a text of verbatim lines, as examples_of reads them.
sub examples_in {
    my ($section) = @_;
    my (@examples, $continued);
    for my $line (split /\n/, $section) {
        next unless $line =~ s/\A    //;
        if (defined $continued) {
            $examples[-1][1] = [ @{ $examples[-1][1] }, split ' ', $line ];
            $continued = $examples[-1][1][-1] eq '\\' ? pop @{ $examples[-1][1] } : undef;
        }
        elsif ($line =~ /\A\$ ((?:\w+=\S+ )*)cmrx-dict(.*)\z/) {
            my ($env, @args) = ({ map { split /=/, $_, 2 } split ' ', $1 }, split ' ', $2);
            $continued = @args && $args[-1] eq '\\' ? pop @args : undef;
            push @examples, [ $env, \@args, [] ];
        }
        elsif (@examples && $line ne '...') {
            push @{ $examples[-1][2] }, $line;
        }
    }
    return @examples;
}

# A line as compared: figures (numbers, the set's identity) and runs of
# blanks made alike.
sub shape {
    my ($line) = @_;
    $line =~ s/\b[0-9a-f]{32}\b/IDENTITY/g;
    $line =~ s/\d+(?:\.\d+)?/#/g;
    $line =~ s/\s+/ /g;
    $line =~ s/\A | \z//g;
    return $line;
}

# The shown lines that are not, in their order, among the printed ones.
sub unshown {
    my ($shown, $printed) = @_;
    my @printed = map { shape($_) } @$printed;
    my @missing;
    for my $line (grep { /\S/ } @$shown) {
        my $want = shape($line);
        shift @printed while @printed && $printed[0] ne $want;
        if (@printed) { shift @printed } else { push @missing, $line }
    }
    return @missing;
}

my $pod     = slurp($MANUAL);
my $scratch = File::Temp->newdir;
my $set     = "$scratch/set";

# A set's life shows every command of a set, a rollback that cancels what
# is pending and one back to a dictionary writers used (at once, by the
# rule of "The newest decision holds").
{
    my @life  = examples_of($pod, "A set's life, from files");
    my %shows = map { my ($args, $shown) = @$_[1, 2]; ($args->[0] => 1, map { ("$args->[0]: $_" => 1) } @$shown) } @life;
    ok $shows{$_}, "A set's life runs $_" for qw(train report list rollback history);
    ok scalar(grep { /\Arollback: Cancelled decision \d+ / } keys %shows), '... a rollback that cancels a pending decision';
    ok scalar(grep { /\Arollback: .* at once, instead of / } keys %shows), '... a rollback at once to a used dictionary';
}

# A usage error is one line on standard error ending with the pointer to
# --help, status 2; a failure at run time one line, status 1. The last
# three run on the set that "A set's life" leaves.
my $USAGE_ERRORS = <<'ERRORS';
    $ cmrx-dict
    cmrx-dict: a subcommand is needed: report, train, prune, list, rollback or history; see cmrx-dict --help
    $ cmrx-dict stats
    cmrx-dict: unknown subcommand 'stats' (report, train, prune, list, rollback or history); see cmrx-dict --help
    $ cmrx-dict report --server cache1
    cmrx-dict: --server must be HOST:PORT, [IPv6]:PORT or the path of a unix socket, not 'cache1'; see cmrx-dict --help
    $ cmrx-dict list
    cmrx-dict: list: --dictionaries DIR is needed; see cmrx-dict --help
    $ cmrx-dict rollback --dictionaries set
    cmrx-dict: rollback: --prefix P is needed (--prefix '' for the whole cache); see cmrx-dict --help
    $ cmrx-dict history
    cmrx-dict: history: --dictionaries DIR is needed; see cmrx-dict --help

    $ cmrx-dict list --dictionaries nowhere
    cmrx-dict: nowhere is not a dictionary set: cannot read nowhere/manifest: No such file or directory
    $ cmrx-dict rollback --dictionaries set --prefix gh: --to 42
    cmrx-dict: rollback: the set has no dictionary with ID 42
    $ cmrx-dict rollback --dictionaries set --prefix npm:
    cmrx-dict: rollback: the prefix npm: has no earlier dictionary to go back to
ERRORS

for my $part ([ "A set's life, from files", examples_of($pod, "A set's life, from files") ],
              [ 'Usage errors', examples_in($USAGE_ERRORS) ]) {
    my ($heading, @examples) = @$part;
    cmp_ok scalar(@examples), '>=', 6, "$heading: " . scalar(@examples) . ' examples';
    for my $example (@examples) {
        my ($env, $args, $shown) = @$example;
        my $command = join ' ', 'cmrx-dict', @$args;
        local @ENV{ keys %$env } = values %$env;
        # The set lives in a scratch folder, shown as the manual names it.
        my ($status, $out, $err) = run_dict([ map { $_ eq 'set' ? $set : $_ } @$args ]);
        my @printed = map { my $l = $_; $l =~ s/\Q$set\E/set/g; $l } split /\n/, $out . $err;
        my $error = @$shown && $shown->[0] =~ /\Acmrx-dict: /;
        my $want = !$error ? 0 : $shown->[0] =~ /; see cmrx-dict --help\z/ ? 2 : 1;
        is $status, $want, "$command: exit status $want" or diag $out, $err;
        my @missing = unshown($shown, \@printed);
        is scalar(@missing), 0, '... and it prints the ' . scalar(@$shown) . ' lines shown'
            or diag "not printed (in order):\n", join("\n", @missing), "\nprinted:\n", join("\n", @printed);
    }
}

# The operations guide's check of a host's copy of the set (its step "Check
# every host before the staged time"), run as written on the set above:
# it prints the IDs of every dictionary the manifest names, and dies
# naming a file that is missing.
{
    my $guide = slurp('lib/Cache/Memcached/RustXS/Operations.pod');
    my ($code) = $guide =~ /^ +perl -MCache::Memcached::RustXS::Zstd -e '\n(.*?)^ +' \/etc\/app\/dictionaries/ms
        or die "Operations.pod: no check of a host's copy\n";
    my $check = sub {
        my ($dir) = @_;
        open my $perl, '-|', $^X, '-Mblib', '-MCache::Memcached::RustXS::Zstd', '-e', $code, $dir
            or die "cannot run $^X: $!\n";
        my $out = do { local $/; <$perl> };
        close $perl;
        return ($? >> 8, defined $out ? $out : '');
    };
    my @ids = sort map { /\bid=(\d+)/ ? $1 : () } grep { /\Adictionary / } split /\n/, slurp("$set/manifest");
    my ($status, $out) = $check->($set);
    is $status, 0, "Operations.pod's check of a host's copy runs";
    is_deeply [sort split ' ', $out], \@ids, '... and prints the IDs of the ' . scalar(@ids) . ' dictionaries the manifest names';
    my $file = (sort glob "$set/*.dict")[0];
    unlink $file or die "unlink $file: $!\n";
    ($status, $out) = $check->($set);
    isnt $status, 0, '... and fails when a file is missing';
}

# The comparison can fail: a line the command does not print is found.
is_deeply [unshown(['The set', 'a line never printed'], ['The set', '  gh: added 1 gh-1.dict'])],
    ['a line never printed'], 'a shown line that is not printed is found';

done_testing;
