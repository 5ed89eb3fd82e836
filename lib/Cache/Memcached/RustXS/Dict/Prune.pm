package Cache::Memcached::RustXS::Dict::Prune;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(epoch_of);
use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now);
use Cache::Memcached::RustXS::Dict qw(fail);
use Cache::Memcached::RustXS::Dict::Sample qw(sample_source);
use Cache::Memcached::RustXS::Dict::Report qw(shown plural duration_text);

our $VERSION = '1.000';

our @EXPORT_OK = qw(prune_set read_set parse_duration);

our $DEFAULT_RETIRED_FOR = 7 * 86400;    # longer than any TTL a site would give a value

my %UNIT = (s => 1, m => 60, h => 3600, d => 86400, w => 7 * 86400);

# ---- durations -----------------------------------------------------------------

# Seconds of a duration: a number with s, m, h, d or w after it, or a
# number alone (seconds). undef when it is none of those.
sub parse_duration {
    my ($text) = @_;
    return undef unless defined $text && $text =~ /\A([0-9]+(?:\.[0-9]+)?)([smhdw]?)\z/;
    return $1 * $UNIT{ length $2 ? $2 : 's' };
}

# ---- the prune -------------------------------------------------------------------

sub read_set {
    my ($dir, %opt) = @_;
    my $set = eval { my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
                     $s->check_clock if $opt{to_change}; $s };
    return $set if $set;
    my $why = Cache::Memcached::RustXS::_error_message($@);
    fail($why);
}

# What prune does with the dictionary of $row (a schedule row) that
# $named sampled values name: keep it (and why), or remove it.
sub _verdict {
    my ($row, $named, $now, $retired_for) = @_;
    my $e = $row->{entry};
    my $retired = $row->{state} eq 'retired' ? $row->{since} : undef;
    my %dictionary = (id => 0 + $e->{id}, prefix => $e->{prefix}, state => $row->{state}, file => $e->{file},
                      size => 0 + $e->{size}, named_by => $named, retired => $retired);
    if ($row->{state} ne 'retired') {
        @dictionary{qw(action why)} = ('keep', ($row->{state} eq 'current' ? 'the current dictionary of prefix '
                                                : "staged: current from $row->{since} for prefix ")
                                               . "'" . shown($e->{prefix}) . "'");
        return \%dictionary;
    }
    # The log dates every retirement: when writers stopped using it, or
    # when the decision that set it aside was made.
    $dictionary{retired_ago} = $now - epoch_of($retired);
    my @keep;
    push @keep, 'still named by ' . plural($named, 'sampled value') if $named;
    push @keep, 'retired only ' . duration_text($dictionary{retired_ago}) . ' ago'
        if $dictionary{retired_ago} < $retired_for;
    if (@keep) {
        @dictionary{qw(action why)} = ('keep', join '; ', @keep);
        return \%dictionary;
    }
    @dictionary{qw(action why)} = ('remove', 'retired ' . duration_text($dictionary{retired_ago}) . ' ago'
                                    . ', and no sampled value names it');
    return \%dictionary;
}

sub prune_set {
    my (%opt) = @_;
    my $dir = $opt{dir};
    my $retired_for = defined $opt{retired_for} ? $opt{retired_for} : $DEFAULT_RETIRED_FOR;
    my $progress = $opt{progress} || sub { };
    my $before = read_set($dir, to_change => 1);

    # How many sampled stored values name each dictionary ID, over every
    # prefix (a frame names its dictionary whatever key it is under).
    my $sampled = sample_source($opt{source}, delimiter => $opt{delimiter}, per_prefix => $opt{sample},
                                max_prefixes => $opt{max_prefixes}, progress => $progress,
                                listing_progress => $opt{listing_progress});
    my $named = $sampled->{dictionary_ids};
    my $fetched = 0;
    $fetched += $_->{fetched} for @{ $sampled->{groups} };

    # Decide on the set as it is now (a writer may have added to it while
    # the values were sampled).
    my $set = read_set($dir);
    fail("$dir now holds another dictionary set (identity " . $set->identity . ', read before: '
         . $before->identity . '): not pruning it') if $set->identity ne $before->identity;
    my $now = now();
    my (@dictionaries, @remove);
    # Each dictionary's state as writers see it now: a staged one stays.
    for my $row (grep { $_->{state} ne 'removed' } $set->schedule(at => $now)) {
        my $dictionary = _verdict($row, $named->{ $row->{entry}{id} } || 0, $now, $retired_for);
        push @dictionaries, $dictionary;
        push @remove, $row->{entry}{id} if $dictionary->{action} eq 'remove';
    }
    my %in_set = map { ($_->{id} => 1) } @dictionaries;
    my %removed_at = map { ($_->{id} => $_->{removed}) } $set->removed;
    my @others = map { +{ id => 0 + $_, named_by => $named->{$_},
                          (exists $removed_at{$_} ? (removed => $removed_at{$_}) : ()) } }
                 grep { !$in_set{$_} } sort { $a <=> $b } keys %$named;

    my $written = 0;
    if (!$opt{dry_run} && @remove) {
        eval { $set->remove($_) for @remove; $set->write; 1 } or do {
            my $why = Cache::Memcached::RustXS::_error_message($@);
            fail($why =~ /changed since this set was read/
                 ? "$dir changed while prune sampled the values (another writer): nothing was removed; "
                   . 'run prune again' : $why);
        };
        $written = 1;
    }
    return { command => 'prune', dir => $dir, source => $opt{source}->spec, dry_run => $opt{dry_run} ? 1 : 0,
             retired_for => $retired_for, now => $now, keys => $sampled->{listing}{keys},
             prefixes => scalar @{ $sampled->{groups} },
             values => $fetched, dictionaries => \@dictionaries, other_ids => \@others,
             removed => [ map { 0 + $_ } @remove ],
             written => $written, set => $set };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Prune - cmrx-dict prune: remove the retired dictionaries of a set that no stored value names any more

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
    use Cache::Memcached::RustXS::Zstd::DictionarySet;
    use Cache::Memcached::RustXS::Dict::Files;
    use Cache::Memcached::RustXS::Dict::Prune qw(prune_set parse_duration);
    use Cache::Memcached::RustXS::Dict::Report::Set qw(print_prune);

    # A set whose prefix user: had two dictionaries: ID 1, retired 30 days
    # ago, and ID 2, current
    my $tmp = File::Temp->newdir;
    my $dir = "$tmp/dictionaries";
    my @users = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 500;
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
    my $month_ago = time - 30 * 86400;
    {
        # (the set's clock, set back a month for this example)
        local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $month_ago };
        $set->add(prefix => 'user:', dictionary => train_dictionary(\@users), level => 9, id => 1);
        $set->add(prefix => 'user:', dictionary => train_dictionary([ reverse @users ]), level => 9, id => 2);
        $set->write;
    }

    # The values the cache holds (here a get response in a file; usually a
    # live server: Cache::Memcached::RustXS::Dict::NodeReader->connect('127.0.0.1:11211'))
    my $dump = File::Temp->new;
    print {$dump} "VALUE user:1 0 " . length($users[0]) . "\r\n$users[0]\r\nEND\r\n";
    close $dump;

    my $result = prune_set(dir => $dir, source => Cache::Memcached::RustXS::Dict::Files->read(["$dump"]),
                           delimiter => ':', sample => 1000, retired_for => parse_duration('7d'));
    print_prune(\*STDOUT, $result);     # ID 1 removed, ID 2 kept (current)

=head1 DESCRIPTION

C<cmrx-dict prune> (the manual, F<cmrx-dict.pod>, describes the command).
It samples the values of a source (a L<Cache::Memcached::RustXS::Dict::NodeReader>
or the values of files, L<Cache::Memcached::RustXS::Dict::Files>) as
L<Cache::Memcached::RustXS::Dict::Sample> does, counts the stored zstd
frames that name each dictionary ID, and removes from the
L<Cache::Memcached::RustXS::Zstd::DictionarySet> the retired dictionaries
that no sampled value names and that were retired at least a given time
ago. Current and staged dictionaries always stay. A removed dictionary's ID stays in
the manifest (a C<removed> line), so the set never gives it to another
dictionary.

=head1 FUNCTIONS

Exported on request: C<prune_set>, C<read_set>, C<parse_duration>.
L<Cache::Memcached::RustXS::Dict::Report::Set> prints the result
(C<print_prune>, C<prune_data>).

=over 4

=item prune_set(dir => $dir, source => $source, delimiter => ':', sample => 1000, retired_for => 604800, dry_run => 0, progress => sub { }, listing_progress => sub { })

Reads the set in C<$dir> (fails, saying why, when it is not a set), lists
and samples the source's keys (C<sample> keys per prefix, by C<delimiter>),
reads the set again and decides on each dictionary:

=over 4

=item *

a current or staged dictionary stays;

=item *

a retired one stays while sampled values name it, or while it was retired
less than C<retired_for> seconds ago (7 days by default: longer than the
time to live of any value a site stores);

=item *

every other retired dictionary is removed.

=back

Unless C<dry_run>, the set is then written (atomically, as
L<Cache::Memcached::RustXS::Zstd::DictionarySet/write> does: the manifest
first, then the files of the removed dictionaries are deleted), a
C<removed> line appended for each. Nothing is written when nothing
changes. It fails, removing nothing, when the set changed between its reading and
the write (another writer): run it again.

Returns a hash reference: C<dir>, C<source> (the source's C<spec>),
C<dry_run>, C<retired_for>, C<now>, C<keys> (listed), C<prefixes>,
C<values> (fetched), C<dictionaries> (per dictionary of the set: C<id>,
C<prefix>, C<state>, C<file>, C<size>, C<named_by>, C<retired> (its date),
C<retired_ago> (seconds), C<action> (C<remove> or C<keep>) and C<why>),
C<other_ids> (IDs that sampled values name and the set has not:
C<id>, C<named_by>, and C<removed> when the set removed it),
C<removed> (IDs), C<written> (whether the set was
written) and C<set> (the set, as written when it was).

=item read_set($dir, to_change => 1)

The set in C<$dir>
(L<Cache::Memcached::RustXS::Zstd::DictionarySet/read>), or a failure
saying why it is not one (no such folder, no manifest, a malformed one).
With C<to_change>, for a command that would append to its log: also a
failure when the clock is behind the log
(L<Cache::Memcached::RustXS::Zstd::DictionarySet/check_clock>), before
anything is sampled or decided.

=item parse_duration($text)

The seconds of a duration: a number (decimals allowed) followed by C<s>,
C<m>, C<h>, C<d> or C<w> (seconds, minutes, hours, days, weeks), or a number
alone (seconds): C<7d>, C<36h>, C<3600s>, C<3600>, C<1.5d>. C<undef> for
anything else.

=back

=head1 SEE ALSO

L<cmrx-dict>'s "prune"; what adds to a set and retires,
L<Cache::Memcached::RustXS::Dict::SetTrainer>; the set, whose manifest
keeps the removed IDs, L<Cache::Memcached::RustXS::Zstd::DictionarySet>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
